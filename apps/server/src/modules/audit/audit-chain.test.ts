import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { canonicalJson } from "./audit-chain";

/** The definition the chain's hashes were first computed with: sorted entries, undefined members dropped. */
const reference = (value: unknown): string => {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) return `[${value.map(reference).join(",")}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${reference(v)}`).join(",")}}`;
};

describe("canonical JSON of audit events", () => {
  it("is byte for byte what the chain has always hashed, for any JSON-like value", () => {
    const value = fc.letrec((tie) => ({
      leaf: fc.oneof(fc.string(), fc.integer(), fc.double(), fc.boolean(), fc.constant(null), fc.constant(undefined)),
      node: fc.oneof(
        { depthSize: "small" },
        tie("leaf"),
        fc.array(tie("node"), { maxLength: 5 }),
        fc.dictionary(fc.string(), tie("node"), { maxKeys: 6 }),
      ),
    })).node;
    fc.assert(
      fc.property(value, (v) => canonicalJson(v) === reference(v)),
      { numRuns: 2_000 },
    );
  });

  it("sorts keys at every level and leaves undefined members out", () => {
    expect(canonicalJson({ b: 1, a: { d: [1, undefined, "x"], c: undefined }, é: true, Z: null })).toBe(
      '{"Z":null,"a":{"d":[1,null,"x"]},"b":1,"é":true}',
    );
  });
});
