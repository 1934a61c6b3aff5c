import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const serverDir = fileURLToPath(new URL("../../", import.meta.url));
const modulesDir = "src/modules";

/** The module a path under src/modules belongs to (its first folder), or undefined. */
const moduleOf = (path: string) => (path.startsWith(`${modulesDir}/`) ? path.split("/")[2] : undefined);

/**
 * Imports (value and type, static and dynamic) of one module's file that reach another module's
 * repository. `authz` is the kernel every module asks who a principal is: its repositories are open.
 */
const repositoryReachIns = (file: string, code: string) => {
  const from = moduleOf(file);
  const found: string[] = [];
  for (const match of code.matchAll(/(?:from|import\()\s*"(\.{1,2}\/[^"]+)"/g)) {
    const target = normalize(join(dirname(file), match[1]!));
    const to = moduleOf(target);
    if (from && to && to !== from && to !== "authz" && /\.repository$/.test(target)) found.push(`${file} -> ${target}`);
  }
  return found;
};

const moduleFiles = (function walk(dir: string): string[] {
  return readdirSync(join(serverDir, dir)).flatMap((name) => {
    const path = `${dir}/${name}`;
    if (statSync(join(serverDir, path)).isDirectory()) return walk(path);
    return name.endsWith(".ts") && !name.endsWith(".test.ts") ? [path] : [];
  });
})(modulesDir);

describe("a module's repositories", () => {
  it("are reached only by the module itself (authz's by every module)", () => {
    expect(moduleFiles.length).toBeGreaterThan(100);
    const found = moduleFiles.flatMap((file) => repositoryReachIns(file, readFileSync(join(serverDir, file), "utf8")));
    expect(found).toEqual([]);
  });

  it("are told apart from services, types included, and from the module's own", () => {
    const file = "src/modules/projects/project.service.ts";
    expect(repositoryReachIns(file, 'import { x } from "../users/user.repository";')).toHaveLength(1);
    expect(repositoryReachIns(file, 'import type { Row } from "../users/user.repository";')).toHaveLength(1);
    expect(repositoryReachIns(file, 'const m = await import("../users/user.repository");')).toHaveLength(1);
    expect(repositoryReachIns(file, 'import { x } from "../users/project-members.service";')).toEqual([]);
    expect(repositoryReachIns(file, 'import { x } from "./project.repository";')).toEqual([]);
    expect(repositoryReachIns(file, 'import { x } from "../authz/principals.repository";')).toEqual([]);
  });
});
