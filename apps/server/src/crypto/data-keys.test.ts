import { describe, expect, it } from "vitest";
import {
  generateDataKey,
  openPartsWithDataKey,
  openWithDataKey,
  sealPartsWithDataKey,
  sealWithDataKey,
} from "./data-keys";

const flip = (stored: string, byte: number) => {
  const raw = Buffer.from(stored.slice(3), "base64");
  raw[byte]! ^= 0x01;
  return `d1:${raw.toString("base64")}`;
};

describe("data-key sealing", () => {
  const key = generateDataKey();
  const aad = "secrets:6f1c1d2e-8a4b-4c3d-9e2f-1a2b3c4d5e6f:value";

  it("opens what it sealed, including empty and non-ASCII text", () => {
    for (const text of ["", "s3cret", "ünïcødé ✓ 🔑", "x".repeat(100_000)]) {
      const stored = sealWithDataKey(key, text, aad);
      expect(stored.startsWith("d1:")).toBe(true);
      expect(stored).not.toContain(text || "\u0000");
      expect(openWithDataKey(key, stored, aad)).toBe(text);
    }
  });

  it("refuses a ciphertext whose nonce, tag or body was altered", () => {
    const stored = sealWithDataKey(key, "s3cret", aad);
    for (const byte of [0, 11, 12, 27, 28, 33]) expect(() => openWithDataKey(key, flip(stored, byte), aad)).toThrow();
  });

  it("refuses a ciphertext under another row, column or key, and an unknown format", () => {
    const stored = sealWithDataKey(key, "s3cret", aad);
    expect(() => openWithDataKey(key, stored, aad.replace(":value", ":comment"))).toThrow();
    expect(() => openWithDataKey(generateDataKey(), stored, aad)).toThrow();
    expect(() => openWithDataKey(key, stored.replace("d1:", "d2:"), aad)).toThrow(
      "unknown data-key ciphertext version",
    );
  });

  it("seals several parts in one ciphertext and opens them apart, empty and multi-byte ones included", () => {
    const fieldsAad = aad.replace(":value", ":fields");
    for (const parts of [
      ["s3cret", "a comment"],
      ["", ""],
      ["ünïcødé ✓ 🔑", ""],
      ["x".repeat(100_000), "y"],
      ["one"],
      ["a", "b", "c"],
    ]) {
      const stored = sealPartsWithDataKey(key, parts, fieldsAad);
      expect(stored.startsWith("d1:")).toBe(true);
      expect(openPartsWithDataKey(key, stored, fieldsAad, parts.length)).toEqual(parts);
    }
  });

  it("refuses parts under another row, column or key, or altered, or opened as another count", () => {
    const fieldsAad = aad.replace(":value", ":fields");
    const stored = sealPartsWithDataKey(key, ["s3cret", "comment"], fieldsAad);
    expect(() => openPartsWithDataKey(key, stored, aad, 2)).toThrow();
    expect(() => openPartsWithDataKey(generateDataKey(), stored, fieldsAad, 2)).toThrow();
    for (const byte of [0, 12, 28, 40])
      expect(() => openPartsWithDataKey(key, flip(stored, byte), fieldsAad, 2)).toThrow();
    expect(() => openPartsWithDataKey(key, stored, fieldsAad, 3)).toThrow("malformed sealed parts");
    // A single-field ciphertext under the same associated data is not read as parts.
    expect(() => openPartsWithDataKey(key, sealWithDataKey(key, "s3cret", fieldsAad), fieldsAad, 2)).toThrow(
      "malformed sealed parts",
    );
  });
});
