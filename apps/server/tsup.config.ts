import { defineConfig } from "tsup";

/**
 * The server as plain JavaScript: one ESM file per entry, workspace packages (the contract) bundled in,
 * npm dependencies left to node_modules (PGlite loads its WebAssembly from its own package directory).
 */
export default defineConfig({
  entry: { main: "src/main.ts" },
  format: ["esm"],
  platform: "node",
  target: "node20",
  noExternal: [/^@keyward\//],
  // The contract's own dependencies stay packages too (CommonJS inside an ESM bundle cannot require).
  external: ["@ts-rest/open-api"],
  clean: true,
  splitting: false,
  sourcemap: true,
  dts: false,
});
