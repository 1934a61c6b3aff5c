/**
 * The published declarations, one file per entry: TypeScript emits the declarations of the client and
 * of the contract it bundles, then rollup-plugin-dts joins each entry's into one file with the contract
 * inlined (it is not published) and zod and ts-rest left as imports. The same text serves ESM (`.d.ts`)
 * and CommonJS (`.d.cts`). Measured on a quiet machine: the emit takes ~28 s and the join seconds,
 * where tsup's `dts`, bundling from the sources, took ~62 s.
 */
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { rollup, type Plugin } from "rollup";
import { dts } from "rollup-plugin-dts";

const entries = ["index", "openapi"] as const;
const packageDir = fileURLToPath(new URL("..", import.meta.url));
const dist = join(packageDir, "dist");
const emitted = mkdtempSync(join(tmpdir(), "keyward-client-types-"));

/** `@keyward/contract` and its subpaths, as the emitted declarations of the contract's sources. */
const contractDeclarations: Plugin = {
  name: "keyward-contract-declarations",
  resolveId(source) {
    if (source === "@keyward/contract") return join(emitted, "contract/src/index.d.ts");
    const sub = /^@keyward\/contract\/(.+)$/.exec(source);
    return sub ? join(emitted, `contract/src/${sub[1]}.d.ts`) : null;
  },
};

try {
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  execFileSync(
    process.execPath,
    [
      tsc,
      ...["-p", "tsconfig.build.json", "--declaration", "--emitDeclarationOnly", "--noEmit", "false"],
      ...["--rootDir", "..", "--outDir", emitted],
    ],
    { cwd: packageDir, stdio: "inherit" },
  );
  const bundle = await rollup({
    input: Object.fromEntries(entries.map((entry) => [entry, join(emitted, `client/src/${entry}.d.ts`)])),
    external: (id) => /^(zod|@ts-rest\/)/.test(id),
    plugins: [contractDeclarations, dts()],
  });
  await bundle.write({ dir: dist, format: "es", entryFileNames: "[name].d.ts" });
  await bundle.close();
  for (const entry of entries) copyFileSync(join(dist, `${entry}.d.ts`), join(dist, `${entry}.d.cts`));
  console.log(`wrote ${entries.map((entry) => `dist/${entry}.d.ts`).join(", ")} and their .d.cts`);
} finally {
  rmSync(emitted, { recursive: true, force: true });
}
