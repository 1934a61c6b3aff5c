import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { ENGINE_DEPENDENT, OWN_DATABASE } from "../engine-dependent";

const serverDir = fileURLToPath(new URL("../../", import.meta.url));

const testFiles = (function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return walk(path);
    return name.endsWith(".test.ts") ? [relative(serverDir, path)] : [];
  });
})(join(serverDir, "test"));

/** The list's patterns use `*` for any characters but a slash. */
const matcher = (pattern: string) =>
  new RegExp(`^${pattern.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/\*/g, "[^/]*")}$`);

const listed = (file: string) => Object.keys(ENGINE_DEPENDENT).some((pattern) => matcher(pattern).test(file));

/**
 * What a file reads that tells it which engine the run has, or a helper it imports that opens a database
 * of its own or starts another instance on the run's.
 */
const NAMES_THE_ENGINE =
  /\bDATABASE_URL\b|\bonPostgres\b|\bdatabaseUrl\b|from "[./]*(helpers\/database|server-process|runtime\/instances|instances)"/;

describe("the PostgreSQL pass's file list", () => {
  it("names every file that looks at the engine, unless it pins its own", () => {
    const engineAware = testFiles.filter((file) => NAMES_THE_ENGINE.test(readFileSync(join(serverDir, file), "utf8")));
    expect(engineAware.length).toBeGreaterThan(10);
    const missing = engineAware.filter((file) => !listed(file) && !OWN_DATABASE.includes(file));
    expect(missing).toEqual([]);
  });

  it("has no pattern that matches nothing, and no file that chooses its own database in it", () => {
    for (const pattern of Object.keys(ENGINE_DEPENDENT)) {
      expect(
        testFiles.filter((file) => matcher(pattern).test(file)),
        pattern,
      ).not.toEqual([]);
    }
    for (const file of OWN_DATABASE) {
      expect(testFiles).toContain(file);
      expect(listed(file), file).toBe(false);
    }
  });
});
