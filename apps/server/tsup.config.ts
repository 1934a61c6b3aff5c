import { defineConfig } from "tsup";

/**
 * The server as plain JavaScript: one ESM file per entry, workspace packages (the contract) bundled in,
 * npm dependencies left to node_modules (PGlite loads its WebAssembly from its own package directory).
 */
export default defineConfig({
  // write-template runs once after the bundle is built (package.json): the migrated PGlite template.
  entry: { main: "src/main.ts", "write-template": "src/write-template.ts" },
  format: ["esm"],
  platform: "node",
  target: "node20",
  // Kysely and jose are pure ESM spread over hundreds of small files: bundled, each worker loads one
  // module instead of ~300 and only the parts it uses.
  noExternal: [/^@keyward\//, "kysely", "jose"],
  // The contract's own dependencies stay packages too (CommonJS inside an ESM bundle cannot require).
  external: ["@ts-rest/open-api"],
  clean: true,
  // The primary and the server are loaded on demand from main (see src/main.ts): separate chunks.
  splitting: true,
  sourcemap: true,
  dts: false,
});
