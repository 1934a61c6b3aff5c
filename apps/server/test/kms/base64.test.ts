import fc from "fast-check";
import { isBase64 } from "@keyward/contract";
import { describe, expect, it } from "vitest";

/** The definition: groups of four, the last one optionally padded. */
const DEFINITION = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

describe("the base64 check of KMS payloads", () => {
  it("accepts exactly what the grammar of padded standard base64 accepts", () => {
    const near = fc.string({ unit: fc.constantFrom(..."AZaz09+/=-_ \u00e9".split("")), maxLength: 24 });
    fc.assert(
      fc.property(near, (value) => isBase64(value) === DEFINITION.test(value)),
      { numRuns: 20_000 },
    );
    for (const value of ["", "AA==", "AAA=", "AAAA", "====", "A===", "AA=A", "AAAA====", "QUJD\n"])
      expect(isBase64(value), JSON.stringify(value)).toBe(DEFINITION.test(value));
  });

  it("accepts every encoding node produces", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => isBase64(Buffer.from(bytes).toString("base64"))),
    );
  });
});
