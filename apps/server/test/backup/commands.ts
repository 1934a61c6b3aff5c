import { spawn } from "node:child_process";
import { generateKeyPairSync, randomBytes } from "node:crypto";
import type { KeywardClient } from "@keyward/client";
import { expectOk, expectWritten } from "../helpers/tenant";
import type { Spawned } from "../runtime/spawn";

export type CommandResult = { code: number | null; stdout: string; stderr: string };

/** `node main.js <args>` of the built server (the bundle the spawned servers run), with only `env` set. */
export const runServerCommand = (args: readonly string[], env: Record<string, string>) =>
  new Promise<CommandResult>((resolve, reject) => {
    const main = process.env.KEYWARD_TEST_SERVER_MAIN;
    if (!main) return reject(new Error("KEYWARD_TEST_SERVER_MAIN is not set: the global setup builds the server"));
    const child = spawn(process.execPath, [main, ...args], {
      env: {
        PATH: process.env.PATH ?? "",
        HOME: process.env.HOME ?? "",
        LOG_LEVEL: "warn",
        PGLITE_SHARED_BUFFERS: "16MB",
        ...env,
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.once("error", reject);
    child.once("close", (code) => resolve({ code, stdout, stderr }));
  });

export const newKey = () => randomBytes(32).toString("base64");

export type Seeded = {
  projectId: string;
  secrets: Record<string, string>;
  clientId: string;
  clientSecret: string;
};

/**
 * An instance with something to carry: a project with secrets (one changed, so with two versions),
 * a machine identity with universal auth and a client secret, a member of the project.
 */
export const seedInstance = async (server: Spawned): Promise<Seeded> => {
  const admin = server.client(server.rootToken);
  const { project } = expectOk(
    await admin.projects.create({ body: { projectName: `backup-${randomBytes(3).toString("hex")}` } }),
  );
  const secrets: Record<string, string> = {};
  for (let i = 0; i < 5; i += 1) secrets[`KEY_${i}`] = `value-${i}-${randomBytes(6).toString("hex")}`;
  expectWritten(
    await admin.secretsV4.batchCreate({
      body: {
        projectId: project.id,
        environment: "dev",
        secretPath: "/",
        secrets: Object.entries(secrets).map(([secretKey, secretValue]) => ({ secretKey, secretValue })),
      },
    }),
  );
  secrets.KEY_0 = "changed-after-create";
  expectWritten(
    await admin.secretsV4.update({
      params: { secretName: "KEY_0" },
      body: { projectId: project.id, environment: "dev", secretPath: "/", secretValue: secrets.KEY_0 },
    }),
  );
  const { identity } = expectOk(
    await admin.identities.create({ body: { name: "backup-reader", organizationId: server.orgId, role: "no-access" } }),
  );
  expectOk(await admin.universalAuth.attach({ params: { identityId: identity.id }, body: {} }));
  const { clientId } = expectOk(
    await admin.universalAuth.get({ params: { identityId: identity.id } }),
  ).identityUniversalAuth;
  const { clientSecret } = expectOk(
    await admin.universalAuth.createClientSecret({ params: { identityId: identity.id }, body: {} }),
  );
  expectOk(
    await admin.projects.addIdentityMembership({
      params: { projectId: project.id, identityId: identity.id },
      body: { role: "viewer" },
    }),
  );
  // A value sealed straight under the root key besides the data keys: a JWT login's static public key.
  const { identity: signer } = expectOk(
    await admin.identities.create({ body: { name: "backup-signer", organizationId: server.orgId, role: "no-access" } }),
  );
  const { publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
  expectOk(
    await admin.jwtAuth.attach({
      params: { identityId: signer.id },
      body: {
        configurationType: "static",
        publicKeys: [publicKey.export({ type: "spki", format: "pem" }).toString()],
        boundIssuer: "https://issuer.backup.test",
        boundClaims: {},
      },
    }),
  );
  return { projectId: project.id, secrets, clientId, clientSecret };
};

/** The secrets' values as the identity reads them after a universal-auth login with the seeded credentials. */
export const readAsIdentity = async (server: Pick<Spawned, "client">, seeded: Seeded) => {
  const { accessToken } = expectOk(
    await server
      .client()
      .universalAuth.login({ body: { clientId: seeded.clientId, clientSecret: seeded.clientSecret } }),
  );
  const reader: KeywardClient = server.client(accessToken);
  const listed = expectOk(
    await reader.secretsV4.list({ query: { projectId: seeded.projectId, environment: "dev", secretPath: "/" } }),
  );
  return Object.fromEntries(listed.secrets.map((s) => [s.secretKey, s.secretValue]));
};

/** The whole audit log's verification, as the instance admin asks for it. */
export const verifyAudit = async (server: Pick<Spawned, "client">, rootToken: string) =>
  expectOk(await server.client(rootToken).auditLogs.verify({ query: {} }));
