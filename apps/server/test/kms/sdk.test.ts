import { createPublicKey, verify } from "node:crypto";
import { EncryptionAlgorithm, InfisicalSDK, KeyUsage, SigningAlgorithm } from "@infisical/sdk";
import { describe, expect, it } from "vitest";
import { b64, createKmsScope, opensslVerifies } from "./helpers";

/** The official SDK's nine kms() calls, unchanged, against Keyward. */
describe("@infisical/sdk v5 kms() against Keyward", () => {
  it("creates, finds, encrypts, decrypts, signs, verifies, lists algorithms, serves the public key and deletes", async () => {
    const { tenant, projectId } = await createKmsScope();
    const sdk = new InfisicalSDK({ siteUrl: tenant.app.baseUrl });
    sdk.auth().accessToken(tenant.adminToken);
    const kms = sdk.kms();

    const aes = await kms.keys().create({
      projectId,
      name: "sdk-aes",
      description: "made by the SDK",
      keyUsage: KeyUsage.ENCRYPTION,
      encryptionAlgorithm: EncryptionAlgorithm.AES_256_GCM,
    });
    expect(aes).toMatchObject({
      name: "sdk-aes",
      projectId,
      orgId: tenant.orgId,
      keyUsage: "encrypt-decrypt",
      encryptionAlgorithm: "aes-256-gcm",
      version: 1,
      isDisabled: false,
      description: "made by the SDK",
    });
    expect(await kms.keys().getByName({ projectId, name: "sdk-aes" })).toMatchObject({ id: aes.id });

    const ciphertext = await kms.encryption().encrypt({ keyId: aes.id, plaintext: b64("hello kms") });
    expect(ciphertext).not.toContain(b64("hello kms"));
    const plaintext = await kms.encryption().decrypt({ keyId: aes.id, ciphertext });
    expect(Buffer.from(plaintext, "base64").toString()).toBe("hello kms");

    const ecc = await kms.keys().create({
      projectId,
      name: "sdk-ecc",
      keyUsage: KeyUsage.SIGNING,
      encryptionAlgorithm: EncryptionAlgorithm.ECC_NIST_P256,
    });
    expect(await kms.signing().listSigningAlgorithms({ keyId: ecc.id })).toEqual([
      "ECDSA_SHA_512",
      "ECDSA_SHA_384",
      "ECDSA_SHA_256",
    ]);
    const data = b64("sign me");
    const signed = await kms.signing().sign({ keyId: ecc.id, data, signingAlgorithm: SigningAlgorithm.ECDSA_SHA_256 });
    expect(signed).toMatchObject({ keyId: ecc.id, signingAlgorithm: "ECDSA_SHA_256" });
    const verified = await kms.signing().verify({
      keyId: ecc.id,
      data,
      signature: signed.signature,
      signingAlgorithm: SigningAlgorithm.ECDSA_SHA_256,
    });
    expect(verified).toMatchObject({ signatureValid: true, keyId: ecc.id, signingAlgorithm: "ECDSA_SHA_256" });
    const forged = await kms.signing().verify({
      keyId: ecc.id,
      data: b64("other data"),
      signature: signed.signature,
      signingAlgorithm: SigningAlgorithm.ECDSA_SHA_256,
    });
    expect(forged.signatureValid).toBe(false);

    const publicKey = await kms.signing().getPublicKey({ keyId: ecc.id });
    const key = createPublicKey({ key: Buffer.from(publicKey, "base64"), format: "der", type: "spki" });
    expect(verify("sha256", Buffer.from("sign me"), key, Buffer.from(signed.signature, "base64"))).toBe(true);
    expect(opensslVerifies(publicKey, "ECDSA_SHA_256", Buffer.from("sign me"), signed.signature)).toBe(true);

    expect(await kms.keys().delete({ keyId: aes.id })).toMatchObject({ id: aes.id, name: "sdk-aes" });
    await expect(kms.keys().getByName({ projectId, name: "sdk-aes" })).rejects.toThrow(
      `Key with name "sdk-aes" not found for project with ID "${projectId}"`,
    );
  });
});
