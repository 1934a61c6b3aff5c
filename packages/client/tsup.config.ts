import { defineConfig } from "tsup";

/**
 * The published build: the contract is bundled in (it is not published), zod and ts-rest stay dependencies.
 * The declarations are written after it by scripts/write-types.ts.
 */
export default defineConfig({
  entry: { index: "src/index.ts", openapi: "src/openapi.ts" },
  format: ["esm", "cjs"],
  platform: "neutral",
  target: "es2022",
  noExternal: [/^@keyward\/contract/],
  external: ["zod", /^@ts-rest\//],
  clean: true,
  sourcemap: true,
  splitting: false,
  tsconfig: "tsconfig.build.json",
});
