import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { ENV_VARIABLES, loadEnv } from "../../src/env";

const doc = readFileSync(fileURLToPath(new URL("../../../../docs/configuration.md", import.meta.url)), "utf8");

/** The rows of docs/configuration.md's tables: variable, default as written. */
const rows = [...doc.matchAll(/^\| `([A-Z][A-Z0-9_]*)` +\| ([^|]*?) +\|/gm)].map((m) => ({
  name: m[1]!,
  fallback: m[2]!,
}));

describe("docs/configuration.md", () => {
  it("lists every variable of the server's schema once, and no other", () => {
    const listed = rows.map((r) => r.name);
    expect(listed.filter((name, i) => listed.indexOf(name) !== i)).toEqual([]);
    expect([...listed].sort()).toEqual([...ENV_VARIABLES].sort());
  });

  it("gives the schema's numeric defaults", () => {
    const defaults = loadEnv({}) as Record<string, unknown>;
    const numeric = rows.filter((r) => /^`\d+`$/.test(r.fallback));
    expect(numeric.length).toBeGreaterThan(30);
    for (const { name, fallback } of numeric) expect(`\`${String(defaults[name])}\``, name).toBe(fallback);
  });

  it("is where the README sends readers for the variables", () => {
    const readme = readFileSync(fileURLToPath(new URL("../../../../README.md", import.meta.url)), "utf8");
    expect(readme).toContain("(docs/configuration.md)");
    expect(readme).not.toMatch(/^\| `PORT`/m);
  });
});
