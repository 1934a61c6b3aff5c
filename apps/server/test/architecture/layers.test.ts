import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Linter } from "eslint";
import { describe, expect, it } from "vitest";
import eslintConfig from "../../eslint.config.js";

const serverDir = fileURLToPath(new URL("../../", import.meta.url));
const srcDir = join(serverDir, "src");

/** The layer rules of the server's ESLint configuration, without the type-checked rest. */
const layerConfigs = eslintConfig.filter(
  (entry) => entry.files !== undefined && entry.rules?.["no-restricted-imports"] !== undefined,
);

const lint = (file: string, code: string) =>
  new Linter({ cwd: serverDir })
    .verify(code, [{ languageOptions: { sourceType: "module" } }, ...layerConfigs], { filename: join(serverDir, file) })
    .filter((m) => m.ruleId === "no-restricted-imports")
    .map((m) => m.message);

describe("the server's layers", () => {
  it("refuse an upward import and allow a downward one", () => {
    expect(lint("src/http/bad.ts", 'import { x } from "../modules/audit/audit-scope";')).toHaveLength(1);
    expect(lint("src/db/bad.ts", 'import { x } from "../context";')).toHaveLength(1);
    expect(lint("src/context.ts", 'import { x } from "./modules/audit/audit-buffer";')).toHaveLength(1);
    expect(lint("src/lib/bad.ts", 'import { x } from "../app/create-app";')).toHaveLength(1);
    expect(lint("src/modules/secrets/bad.ts", 'import { x } from "../../app/deps";')).toHaveLength(1);
    expect(lint("src/app/bad.ts", 'import { x } from "../runtime/worker";')).toHaveLength(1);
    expect(lint("src/modules/secrets/good.ts", 'import { x } from "../../db/transaction";')).toEqual([]);
    expect(lint("src/app/good.ts", 'import { x } from "../modules/audit/audit-scope";')).toEqual([]);
    expect(lint("src/db/good.ts", 'import { x } from "./tables/runtime";')).toEqual([]);
  });

  it("have no import cycle among the modules' runtime imports", () => {
    const files = (function walk(dir: string): string[] {
      return readdirSync(dir).flatMap((f) => {
        const path = join(dir, f);
        return statSync(path).isDirectory() ? walk(path) : f.endsWith(".ts") && !f.endsWith(".test.ts") ? [path] : [];
      });
    })(srcDir);
    const known = new Set(files);
    const edges = new Map<string, string[]>();
    for (const file of files) {
      const text = readFileSync(file, "utf8");
      const targets: string[] = [];
      // Type-only imports vanish from the compiled code, so they cannot form a cycle at run time.
      for (const m of text.matchAll(/^import\s+(?!type\b)[^;]*?from\s+"(\.[^"]+)"/gm)) {
        const base = resolve(dirname(file), m[1]!);
        const target = [`${base}.ts`, join(base, "index.ts")].find((c) => known.has(c));
        if (target) targets.push(target);
      }
      edges.set(file, targets);
    }
    const cycles: string[] = [];
    const state = new Map<string, "open" | "done">();
    const stack: string[] = [];
    const visit = (file: string) => {
      state.set(file, "open");
      stack.push(file);
      for (const next of edges.get(file) ?? []) {
        if (state.get(next) === "open")
          cycles.push([...stack.slice(stack.indexOf(next)), next].map((f) => relative(srcDir, f)).join(" -> "));
        else if (!state.has(next)) visit(next);
      }
      stack.pop();
      state.set(file, "done");
    };
    for (const file of files) if (!state.has(file)) visit(file);
    expect(cycles).toEqual([]);
  });
});
