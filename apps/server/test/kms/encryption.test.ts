import { createDecipheriv } from "node:crypto";
import { describe, expect, it } from "vitest";
import { b64, createKey, createKmsScope, type KmsScope } from "./helpers";

const encrypt = (scope: KmsScope, keyId: string, plaintext: string) =>
  scope.http.post(`/api/v1/kms/keys/${keyId}/encrypt`, { keyId, plaintext });
const decrypt = (scope: KmsScope, keyId: string, ciphertext: string) =>
  scope.http.post(`/api/v1/kms/keys/${keyId}/decrypt`, { keyId, ciphertext });

const INVALID = "Invalid ciphertext: it is malformed, was altered, or was not made by this key";

describe("KMS encryption", () => {
  it("round-trips binary data with AES-256-GCM and AES-128-GCM keys, up to 4096 bytes", async () => {
    const scope = await createKmsScope();
    for (const encryptionAlgorithm of ["aes-256-gcm", "aes-128-gcm"]) {
      const key = await createKey(scope, { encryptionAlgorithm });
      for (const data of [Buffer.alloc(0), Buffer.from([0, 255, 1, 254]), Buffer.alloc(4096, 7)]) {
        const { ciphertext } = (await encrypt(scope, key.id, data.toString("base64"))).body;
        const { plaintext } = (await decrypt(scope, key.id, ciphertext)).body;
        expect(Buffer.from(plaintext, "base64").equals(data)).toBe(true);
      }
    }
  });

  it("rejects input that is not base64 or decodes to more than 4096 bytes", async () => {
    const scope = await createKmsScope();
    const key = await createKey(scope);
    const notBase64 = await encrypt(scope, key.id, "not base64!");
    expect(notBase64.status).toBe(422);
    expect(JSON.stringify(notBase64.body.message)).toContain("plaintext must be base64 encoded");
    const tooLarge = await encrypt(scope, key.id, Buffer.alloc(4097).toString("base64"));
    expect(tooLarge.status).toBe(422);
    expect(JSON.stringify(tooLarge.body.message)).toContain("data cannot exceed 4096 bytes");
    expect((await decrypt(scope, key.id, "%%%")).status).toBe(422);
  });

  it("answers 400, never 500, for a tampered, truncated, foreign or made-up ciphertext", async () => {
    const scope = await createKmsScope();
    const key = await createKey(scope);
    const other = await createKey(scope);
    const { ciphertext } = (await encrypt(scope, key.id, b64("secret"))).body;
    const blob = Buffer.from(ciphertext, "base64");
    const flipped = Buffer.from(blob);
    flipped[flipped.length - 1]! ^= 1;
    const otherVersion = Buffer.from(blob);
    otherVersion.writeUInt32BE(2, 1);
    const hugeVersion = Buffer.from(blob);
    hugeVersion.writeUInt32BE(0xffffffff, 1);
    for (const bad of [
      flipped.toString("base64"),
      blob.subarray(0, 20).toString("base64"),
      otherVersion.toString("base64"),
      hugeVersion.toString("base64"),
      b64("definitely not a ciphertext of ours, but long enough to parse"),
      "",
    ]) {
      expect(await decrypt(scope, key.id, bad)).toMatchObject({ status: 400, body: { message: INVALID } });
    }
    expect(await decrypt(scope, other.id, ciphertext)).toMatchObject({ status: 400, body: { message: INVALID } });
  });

  it("keeps every older ciphertext readable after rotations, and encrypts with the newest version", async () => {
    const scope = await createKmsScope();
    const key = await createKey(scope);
    const v1 = (await encrypt(scope, key.id, b64("one"))).body.ciphertext as string;
    const rotated = await scope.http.post(`/api/v1/kms/keys/${key.id}/rotate`, {});
    expect(rotated.body.key).toMatchObject({ id: key.id, version: 2 });
    const v2 = (await encrypt(scope, key.id, b64("two"))).body.ciphertext as string;
    expect((await scope.http.post(`/api/v1/kms/keys/${key.id}/rotate`, {})).body.key.version).toBe(3);
    const v3 = (await encrypt(scope, key.id, b64("three"))).body.ciphertext as string;
    expect((await scope.http.get(`/api/v1/kms/keys/${key.id}`)).body.key.version).toBe(3);
    for (const [ciphertext, text] of [
      [v1, "one"],
      [v2, "two"],
      [v3, "three"],
    ] as const) {
      expect(Buffer.from((await decrypt(scope, key.id, ciphertext)).body.plaintext, "base64").toString()).toBe(text);
    }
    // Each version has its own material: the newest exported key opens only the newest ciphertext.
    const exported = Buffer.from(
      (await scope.http.get(`/api/v1/kms/keys/${key.id}/private-key`)).body.privateKey,
      "base64",
    );
    const open = (ciphertext: string, version: number) => {
      const raw = Buffer.from(ciphertext, "base64");
      const decipher = createDecipheriv("aes-256-gcm", exported, raw.subarray(5, 17));
      decipher.setAAD(Buffer.from(`keyward-kms:${key.id}:${version}`));
      decipher.setAuthTag(raw.subarray(17, 33));
      return Buffer.concat([decipher.update(raw.subarray(33)), decipher.final()]).toString();
    };
    expect(Buffer.from(v3, "base64").readUInt32BE(1)).toBe(3);
    expect(open(v3, 3)).toBe("three");
    expect(() => open(v1, 1)).toThrow();
  });

  it("refuses to rotate a signing key or a disabled key", async () => {
    const scope = await createKmsScope();
    const signing = await createKey(scope, { keyUsage: "sign-verify", encryptionAlgorithm: "ECC_NIST_P256" });
    const rotate = await scope.http.post(`/api/v1/kms/keys/${signing.id}/rotate`, {});
    expect(rotate.status).toBe(400);
    const key = await createKey(scope);
    await scope.http.patch(`/api/v1/kms/keys/${key.id}`, { isDisabled: true });
    expect(await scope.http.post(`/api/v1/kms/keys/${key.id}/rotate`, {})).toMatchObject({
      status: 400,
      body: { message: "Key is disabled" },
    });
  });

  it("refuses to encrypt or decrypt with a signing key", async () => {
    const scope = await createKmsScope();
    const signing = await createKey(scope, { keyUsage: "sign-verify", encryptionAlgorithm: "ECC_NIST_P256" });
    expect(await encrypt(scope, signing.id, b64("x"))).toMatchObject({
      status: 400,
      body: { message: `Key with ID '${signing.id}' is not intended for encryption` },
    });
  });

  it("stores key material only sealed under the project's data key", async () => {
    const scope = await createKmsScope();
    const key = await createKey(scope);
    const exported = (await scope.http.get(`/api/v1/kms/keys/${key.id}/private-key`)).body.privateKey as string;
    expect(Buffer.from(exported, "base64")).toHaveLength(32);
    const rows = await scope.tenant.app.deps.db
      .selectFrom("kms_key_versions")
      .select(["encrypted_material"])
      .where("key_id", "=", key.id)
      .execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]!.encrypted_material.startsWith("d1:")).toBe(true);
    expect(rows[0]!.encrypted_material).not.toContain(exported);
    expect(Buffer.from(rows[0]!.encrypted_material.slice(3), "base64").includes(Buffer.from(exported, "base64"))).toBe(
      false,
    );
  });
});
