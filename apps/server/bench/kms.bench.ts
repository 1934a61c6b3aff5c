import { randomBytes } from "node:crypto";
import type { KeywardClient } from "@keyward/client";
import { benchEndpoint, setupOk } from "./lib/endpoint";

const KEYS = 8;
const PAYLOADS = 64;

const createKeys = async (admin: KeywardClient) => {
  const { project } = setupOk(await admin.projects.create({ body: { projectName: "bench-kms", type: "kms" } }));
  const keys: string[] = [];
  for (let i = 0; i < KEYS; i += 1) {
    const { key } = setupOk(await admin.kms.create({ body: { projectId: project.id, name: `bench-${i}` } }));
    keys.push(key.id);
  }
  return keys;
};

/**
 * Encrypt and decrypt of 1 KiB with 8 AES-256-GCM keys at 32 connections, beside the
 * express + ts-rest ceiling. Target on PostgreSQL: >= 40% of the ceiling.
 */
await benchEndpoint(`POST kms encrypt 1 KiB (${KEYS} keys)`, async (admin) => {
  const keys = await createKeys(admin);
  const plaintext = randomBytes(1024).toString("base64");
  const paths = Array.from({ length: PAYLOADS }, (_, i) => `/api/v1/kms/keys/${keys[i % KEYS]}/encrypt`);
  return { paths, postBodies: paths.map(() => JSON.stringify({ plaintext })) };
});

await benchEndpoint(`POST kms decrypt 1 KiB (${KEYS} keys)`, async (admin) => {
  const keys = await createKeys(admin);
  const paths: string[] = [];
  const postBodies: string[] = [];
  for (let i = 0; i < PAYLOADS; i += 1) {
    const keyId = keys[i % KEYS]!;
    const { ciphertext } = setupOk(
      await admin.kms.encrypt({ params: { keyId }, body: { plaintext: randomBytes(1024).toString("base64") } }),
    );
    paths.push(`/api/v1/kms/keys/${keyId}/decrypt`);
    postBodies.push(JSON.stringify({ ciphertext }));
  }
  return { paths, postBodies };
});
