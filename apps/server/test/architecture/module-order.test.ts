import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const serverDir = fileURLToPath(new URL("../../", import.meta.url));
const architectureDoc = fileURLToPath(new URL("../../../../docs/architecture.md", import.meta.url));
const modulesDir = "src/modules";

/** The module a path under src/modules belongs to (its first folder), or undefined. */
const moduleOf = (path: string) => (path.startsWith(`${modulesDir}/`) ? path.split("/")[2] : undefined);

type Reach = { file: string; target: string; from: string; to: string };

/** A module file's imports of other modules: value and type, static and dynamic. */
const reachesOf = (file: string, code: string): Reach[] => {
  const from = moduleOf(file);
  if (!from) return [];
  return [...code.matchAll(/(?:from|import\()\s*"(\.{1,2}\/[^"]+)"/g)].flatMap((match) => {
    const target = normalize(join(dirname(file), match[1]!));
    const to = moduleOf(target);
    return to && to !== from ? [{ file, target, from, to }] : [];
  });
};

/** Reaches into another module's repository, `authz`'s included: every module asks it through its services. */
const repositoryReaches = (reaches: Reach[]) =>
  reaches.filter((r) => /\.repository$/.test(r.target)).map((r) => `${r.file} -> ${r.target}`);

/** Every cycle's modules among module folders (Tarjan's strongly connected components of more than one). */
const moduleCycles = (edges: Map<string, Set<string>>) => {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const cycles: string[][] = [];
  const visit = (node: string) => {
    index.set(node, next);
    low.set(node, next);
    next += 1;
    stack.push(node);
    for (const to of edges.get(node) ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node)!, low.get(to)!));
      } else if (stack.includes(to)) low.set(node, Math.min(low.get(node)!, index.get(to)!));
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      component.push(member);
    } while (member !== node);
    if (component.length > 1) cycles.push(component.sort());
  };
  for (const node of edges.keys()) if (!index.has(node)) visit(node);
  return cycles;
};

const edgesOf = (reaches: Reach[]) => {
  const edges = new Map<string, Set<string>>();
  for (const { from, to } of reaches) edges.set(from, (edges.get(from) ?? new Set()).add(to));
  return edges;
};

/** The module map of docs/architecture.md: each row's module and the modules it may import, in order. */
const moduleMap = (doc: string) => {
  const table = /<!-- module-map:start -->([\s\S]*?)<!-- module-map:end -->/.exec(doc)?.[1] ?? "";
  return table
    .split("\n")
    .filter((line) => /^\| `/.test(line))
    .map((line) => {
      const cells = line.split("|").map((cell) => cell.trim());
      const names = (cell: string) => [...cell.matchAll(/`([a-z-]+)`/g)].map((m) => m[1]!);
      return { module: names(cells[1]!)[0]!, mayImport: names(cells[4]!) };
    });
};

const moduleFiles = (function walk(dir: string): string[] {
  return readdirSync(join(serverDir, dir)).flatMap((name) => {
    const path = `${dir}/${name}`;
    if (statSync(join(serverDir, path)).isDirectory()) return walk(path);
    return name.endsWith(".ts") && !name.endsWith(".test.ts") ? [path] : [];
  });
})(modulesDir);
const reaches = moduleFiles.flatMap((file) => reachesOf(file, readFileSync(join(serverDir, file), "utf8")));
const map = moduleMap(readFileSync(architectureDoc, "utf8"));

describe("the module order", () => {
  it("has a row in the architecture doc's module map for every module folder, in an order that imports only earlier rows", () => {
    const folders = readdirSync(join(serverDir, modulesDir)).filter((name) =>
      statSync(join(serverDir, modulesDir, name)).isDirectory(),
    );
    expect(map.map((row) => row.module).sort()).toEqual(folders.sort());
    const seen = new Set<string>();
    for (const row of map) {
      expect(
        row.mayImport.filter((m) => !seen.has(m)),
        `${row.module} imports a later row`,
      ).toEqual([]);
      seen.add(row.module);
    }
  });

  it("imports across modules only what the map allows, types included", () => {
    const allowed = new Map(map.map((row) => [row.module, new Set(row.mayImport)]));
    const against = reaches.filter((r) => !allowed.get(r.from)?.has(r.to)).map((r) => `${r.file} -> ${r.target}`);
    expect(reaches.length).toBeGreaterThan(100);
    expect(against).toEqual([]);
  });

  it("has no cycle among module folders and no reach into another module's repository", () => {
    expect(moduleCycles(edgesOf(reaches))).toEqual([]);
    expect(repositoryReaches(reaches)).toEqual([]);
  });

  it("would catch a cycle, a repository reach and an import the map does not allow", () => {
    const added = (file: string, code: string) => [...reaches, ...reachesOf(file, code)];
    const cycle = added("src/modules/authz/bad.ts", 'import type { X } from "../secrets/secret.service";');
    expect(moduleCycles(edgesOf(cycle)).flat()).toEqual(expect.arrayContaining(["authz", "secrets"]));
    const dynamicCycle = added("src/modules/folders/bad.ts", 'const m = await import("../projects/project.service");');
    expect(moduleCycles(edgesOf(dynamicCycle)).flat()).toEqual(expect.arrayContaining(["folders", "projects"]));
    const file = "src/modules/projects/project.service.ts";
    expect(repositoryReaches(reachesOf(file, 'import { x } from "../users/user.repository";'))).toHaveLength(1);
    expect(repositoryReaches(reachesOf(file, 'import type { Row } from "../users/user.repository";'))).toHaveLength(1);
    expect(repositoryReaches(reachesOf(file, 'import { x } from "../users/project-members.service";'))).toEqual([]);
    expect(repositoryReaches(reachesOf(file, 'import { x } from "./project.repository";'))).toEqual([]);
    expect(repositoryReaches(reachesOf(file, 'import { x } from "../authz/principals.repository";'))).toHaveLength(1);
    expect(repositoryReaches(reachesOf(file, 'import { x } from "../authz/principals";'))).toEqual([]);
    const allowed = new Set(map.find((row) => row.module === "projects")!.mayImport);
    expect(allowed.has("folders")).toBe(true);
    expect(allowed.has("users")).toBe(false);
  });
});
