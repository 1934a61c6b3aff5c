import { describe, expect, it } from "vitest";
import { dataKeyOf, generateDataKey } from "../../crypto/data-keys";
import { createReferenceFreeMemo } from "./reference-free";
import { sealFields, secretAad } from "./secret-crypto";

const key = dataKeyOf("k1", generateDataKey());
const sealedRow = (value: string) => sealFields(key, "secrets", "s1", { value, comment: "", metadata: [] });

describe("the memo of reference-free values", () => {
  it("knows a value by its ciphertext: the same value sealed again is a stranger", () => {
    const memo = createReferenceFreeMemo();
    const row = sealedRow("plain");
    expect(memo.has(row)).toBe(false);
    memo.add(row);
    expect(memo.has(row)).toBe(true);
    expect(memo.has({ ...row })).toBe(true);
    expect(memo.has(sealedRow("plain"))).toBe(false);
  });

  it("names a row in the older form by its value's ciphertext, and never a row with neither", () => {
    const memo = createReferenceFreeMemo();
    const older = { encrypted_fields: null, encrypted_value: key.seal("plain", secretAad("secrets", "s2", "value")) };
    memo.add(older);
    expect(memo.has(older)).toBe(true);
    const broken = { encrypted_fields: null, encrypted_value: null };
    memo.add(broken);
    expect(memo.has(broken)).toBe(false);
    expect(memo.size()).toBe(1);
  });

  it("starts afresh past its bound", () => {
    const memo = createReferenceFreeMemo(2);
    const rows = [sealedRow("a"), sealedRow("b"), sealedRow("c")];
    for (const row of rows) memo.add(row);
    expect(memo.size()).toBe(1);
    expect(memo.has(rows[0]!)).toBe(false);
    expect(memo.has(rows[2]!)).toBe(true);
  });
});
