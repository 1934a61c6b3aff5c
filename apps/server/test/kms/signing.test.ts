import { createHash } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { b64, createKey, createKmsScope, opensslSigns, opensslVerifies, type KmsScope } from "./helpers";

const RSA_ALGORITHMS = [
  "RSASSA_PSS_SHA_512",
  "RSASSA_PSS_SHA_384",
  "RSASSA_PSS_SHA_256",
  "RSASSA_PKCS1_V1_5_SHA_512",
  "RSASSA_PKCS1_V1_5_SHA_384",
  "RSASSA_PKCS1_V1_5_SHA_256",
];
const ECDSA_ALGORITHMS = ["ECDSA_SHA_512", "ECDSA_SHA_384", "ECDSA_SHA_256"];
const hashOf = (algorithm: string) => `sha${algorithm.slice(-3)}`;

const message = Buffer.from("the quick brown fox signs a contract");

describe("KMS signing", () => {
  let scope: KmsScope;
  const keys: Record<string, { id: string; publicKey: string; privateKey: string }> = {};

  beforeAll(async () => {
    scope = await createKmsScope();
    for (const encryptionAlgorithm of ["RSA_4096", "ECC_NIST_P256"]) {
      const key = await createKey(scope, { keyUsage: "sign-verify", encryptionAlgorithm });
      keys[encryptionAlgorithm] = {
        id: key.id,
        publicKey: (await scope.http.get(`/api/v1/kms/keys/${key.id}/public-key`)).body.publicKey,
        privateKey: (await scope.http.get(`/api/v1/kms/keys/${key.id}/private-key`)).body.privateKey,
      };
    }
  });

  const sign = (keyId: string, body: Record<string, unknown>) =>
    scope.http.post(`/api/v1/kms/keys/${keyId}/sign`, { keyId, ...body });
  const verify = (keyId: string, body: Record<string, unknown>) =>
    scope.http.post(`/api/v1/kms/keys/${keyId}/verify`, { keyId, ...body });

  it("lists the signing algorithms of each key type in enum order", async () => {
    const rsa = await scope.http.get(`/api/v1/kms/keys/${keys.RSA_4096!.id}/signing-algorithms`);
    expect(rsa.body.signingAlgorithms).toEqual(RSA_ALGORITHMS);
    const ecc = await scope.http.get(`/api/v1/kms/keys/${keys.ECC_NIST_P256!.id}/signing-algorithms`);
    expect(ecc.body.signingAlgorithms).toEqual(ECDSA_ALGORITHMS);
  });

  for (const [keyType, algorithms] of [
    ["RSA_4096", RSA_ALGORITHMS],
    ["ECC_NIST_P256", ECDSA_ALGORITHMS],
  ] as const) {
    for (const signingAlgorithm of algorithms) {
      it(`signs with ${signingAlgorithm}, data and digest alike, verifiably by openssl with the served public key`, async () => {
        const key = keys[keyType]!;
        const digest = createHash(hashOf(signingAlgorithm)).update(message).digest();
        for (const [data, isDigest] of [
          [message, false],
          [digest, true],
        ] as const) {
          const signed = await sign(key.id, { signingAlgorithm, data: data.toString("base64"), isDigest });
          expect(signed.body).toMatchObject({ keyId: key.id, signingAlgorithm });
          expect(opensslVerifies(key.publicKey, signingAlgorithm, message, signed.body.signature)).toBe(true);
          const valid = await verify(key.id, {
            signingAlgorithm,
            data: data.toString("base64"),
            isDigest,
            signature: signed.body.signature,
          });
          expect(valid.body).toMatchObject({ signatureValid: true, keyId: key.id, signingAlgorithm });
          const other = await verify(key.id, {
            signingAlgorithm,
            data: (isDigest ? createHash(hashOf(signingAlgorithm)).update("x").digest() : Buffer.from("x")).toString(
              "base64",
            ),
            isDigest,
            signature: signed.body.signature,
          });
          expect(other.body.signatureValid).toBe(false);
        }
        // A signature made by openssl with the exported private key verifies here, in both modes.
        const external = opensslSigns(key.privateKey, signingAlgorithm, message);
        for (const [data, isDigest] of [
          [message, false],
          [digest, true],
        ] as const) {
          const res = await verify(key.id, {
            signingAlgorithm,
            data: data.toString("base64"),
            isDigest,
            signature: external,
          });
          expect(res.body.signatureValid).toBe(true);
        }
      });
    }
  }

  it("reports a malformed signature as invalid rather than failing", async () => {
    const res = await verify(keys.ECC_NIST_P256!.id, {
      signingAlgorithm: "ECDSA_SHA_256",
      data: b64("x"),
      signature: b64("not a signature"),
    });
    expect(res).toMatchObject({ status: 200, body: { signatureValid: false } });
    const rsa = await verify(keys.RSA_4096!.id, {
      signingAlgorithm: "RSASSA_PSS_SHA_256",
      data: createHash("sha256").update("x").digest("base64"),
      isDigest: true,
      signature: b64("short"),
    });
    expect(rsa.body.signatureValid).toBe(false);
  });

  it("refuses an algorithm of another key type, a digest of the wrong length and unknown algorithms", async () => {
    const rsaId = keys.RSA_4096!.id;
    expect((await sign(rsaId, { signingAlgorithm: "ECDSA_SHA_256", data: b64("x") })).status).toBe(400);
    const shortDigest = await sign(rsaId, { signingAlgorithm: "RSASSA_PSS_SHA_256", data: b64("x"), isDigest: true });
    expect(shortDigest).toMatchObject({
      status: 400,
      body: { message: "Invalid digest length for RSASSA_PSS_SHA_256: expected 32 bytes, got 1" },
    });
    expect((await sign(rsaId, { signingAlgorithm: "RSASSA_PSS_SHA_1", data: b64("x") })).status).toBe(422);
    expect((await sign(rsaId, { signingAlgorithm: "RSASSA_PSS_SHA_256", data: "**" })).status).toBe(422);
  });

  it("refuses signing operations on an encrypt-decrypt key", async () => {
    const aes = await createKey(scope);
    const message = `Key with ID '${aes.id}' is not intended for signing`;
    expect(await scope.http.get(`/api/v1/kms/keys/${aes.id}/signing-algorithms`)).toMatchObject({
      status: 400,
      body: { message },
    });
    expect(await scope.http.get(`/api/v1/kms/keys/${aes.id}/public-key`)).toMatchObject({
      status: 400,
      body: { message },
    });
    expect(await sign(aes.id, { signingAlgorithm: "ECDSA_SHA_256", data: b64("x") })).toMatchObject({
      status: 400,
      body: { message },
    });
  });

  it("refuses a disabled key, and checks sign and verify permissions", async () => {
    const key = await createKey(scope, { keyUsage: "sign-verify", encryptionAlgorithm: "ECC_NIST_P256" });
    await scope.http.patch(`/api/v1/kms/keys/${key.id}`, { isDisabled: true });
    for (const res of [
      await sign(key.id, { signingAlgorithm: "ECDSA_SHA_256", data: b64("x") }),
      await verify(key.id, { signingAlgorithm: "ECDSA_SHA_256", data: b64("x"), signature: b64("y") }),
      await scope.http.get(`/api/v1/kms/keys/${key.id}/public-key`),
      await scope.http.get(`/api/v1/kms/keys/${key.id}/signing-algorithms`),
      await scope.http.get(`/api/v1/kms/keys/${key.id}/private-key`),
    ])
      expect(res).toMatchObject({ status: 400, body: { message: "Key is disabled" } });
  });
});
