import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTenant, expectOk, uniqueName, type Tenant } from "../helpers/tenant";
import { rawHttp } from "../secrets/helpers";

export const createKmsProject = async (tenant: Tenant) =>
  expectOk(await tenant.admin.projects.create({ body: { projectName: uniqueName("kms"), type: "kms" } })).project;

/** A tenant with a KMS project and a raw fetch for requests the typed client would refuse to send. */
export const createKmsScope = async () => {
  const tenant = await createTenant();
  const project = await createKmsProject(tenant);
  return { tenant, projectId: project.id, http: rawHttp(tenant.app.baseUrl, tenant.adminToken) };
};
export type KmsScope = Awaited<ReturnType<typeof createKmsScope>>;

export const createKey = async (
  scope: KmsScope,
  body: { encryptionAlgorithm?: string; keyUsage?: string; name?: string } = {},
) => {
  const res = await scope.http.post("/api/v1/kms/keys", {
    projectId: scope.projectId,
    name: body.name ?? uniqueName("key"),
    ...body,
  });
  if (res.status !== 200) throw new Error(`create key: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.key as { id: string; name: string; version: number; encryptionAlgorithm: string };
};

export const b64 = (text: string | Buffer) => Buffer.from(text).toString("base64");

const OPENSSL_HASH = { SHA_256: "-sha256", SHA_384: "-sha384", SHA_512: "-sha512" } as Record<string, string>;

/** `openssl dgst -verify` with the served public key (base64 DER SPKI); true on "Verified OK". */
export const opensslVerifies = (publicKeyB64: string, algorithm: string, message: Buffer, signatureB64: string) => {
  const dir = mkdtempSync(join(tmpdir(), "kms-openssl-"));
  try {
    writeFileSync(join(dir, "pub.der"), Buffer.from(publicKeyB64, "base64"));
    writeFileSync(join(dir, "data"), message);
    writeFileSync(join(dir, "sig"), Buffer.from(signatureB64, "base64"));
    execFileSync("openssl", ["pkey", "-pubin", "-inform", "DER", "-in", "pub.der", "-out", "pub.pem"], { cwd: dir });
    const pss = algorithm.startsWith("RSASSA_PSS")
      ? ["-sigopt", "rsa_padding_mode:pss", "-sigopt", "rsa_pss_saltlen:-1"]
      : [];
    const args = [
      "dgst",
      OPENSSL_HASH[algorithm.slice(-7)]!,
      ...pss,
      "-verify",
      "pub.pem",
      "-signature",
      "sig",
      "data",
    ];
    try {
      return execFileSync("openssl", args, { cwd: dir, stdio: "pipe" }).toString().includes("Verified OK");
    } catch {
      return false;
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
};

/** `openssl dgst -sign` with an exported private key (base64 PKCS#8 DER); returns the signature, base64. */
export const opensslSigns = (privateKeyB64: string, algorithm: string, message: Buffer) => {
  const dir = mkdtempSync(join(tmpdir(), "kms-openssl-"));
  try {
    writeFileSync(join(dir, "key.der"), Buffer.from(privateKeyB64, "base64"));
    writeFileSync(join(dir, "data"), message);
    execFileSync("openssl", ["pkey", "-inform", "DER", "-in", "key.der", "-out", "key.pem"], { cwd: dir });
    const pss = algorithm.startsWith("RSASSA_PSS")
      ? ["-sigopt", "rsa_padding_mode:pss", "-sigopt", "rsa_pss_saltlen:digest"]
      : [];
    const hash = OPENSSL_HASH[algorithm.slice(-7)]!;
    return execFileSync("openssl", ["dgst", hash, ...pss, "-sign", "key.pem", "data"], { cwd: dir }).toString("base64");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
};
