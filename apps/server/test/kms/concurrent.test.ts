import { describe, expect, it } from "vitest";
import { b64, createKey, createKmsScope } from "./helpers";

describe("concurrent KMS operations", () => {
  it("parallel encrypts and decrypts over several keys and versions each use their own key", async () => {
    const scope = await createKmsScope();
    const keys = [await createKey(scope), await createKey(scope), await createKey(scope)];
    const encrypt = (keyId: string, text: string) =>
      scope.http.post(`/api/v1/kms/keys/${keyId}/encrypt`, { plaintext: b64(text) });
    const old = (await encrypt(keys[0]!.id, "before rotation")).body.ciphertext as string;
    expect((await scope.http.post(`/api/v1/kms/keys/${keys[0]!.id}/rotate`, {})).status).toBe(200);

    const texts = Array.from({ length: 24 }, (_, i) => ({ keyId: keys[i % 3]!.id, text: `payload ${i}` }));
    const encrypted = await Promise.all(texts.map(({ keyId, text }) => encrypt(keyId, text)));
    expect(encrypted.map((r) => r.status)).toEqual(texts.map(() => 200));

    const decrypts = [
      ...texts.map(({ keyId }, i) => ({ keyId, ciphertext: encrypted[i]!.body.ciphertext as string, status: 200 })),
      { keyId: keys[0]!.id, ciphertext: old, status: 200 },
      // Another key's ciphertext fails alone.
      { keyId: keys[1]!.id, ciphertext: old, status: 400 },
    ];
    const results = await Promise.all(
      decrypts.map((d) => scope.http.post(`/api/v1/kms/keys/${d.keyId}/decrypt`, { ciphertext: d.ciphertext })),
    );
    expect(results.map((r) => r.status)).toEqual(decrypts.map((d) => d.status));
    const plain = results.map((r) =>
      r.status === 200 ? Buffer.from(r.body.plaintext as string, "base64").toString() : null,
    );
    expect(plain).toEqual([...texts.map((t) => t.text), "before rotation", null]);
  });
});
