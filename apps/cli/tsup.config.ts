import { defineConfig } from "tsup";

/** One executable file: the client and contract are bundled, zod, ts-rest and commander stay dependencies. */
export default defineConfig({
  entry: { keyward: "src/main.ts" },
  format: ["esm"],
  platform: "node",
  target: "node20",
  noExternal: [/^@keyward\//],
  external: ["zod", /^@ts-rest\//, "commander"],
  banner: { js: "#!/usr/bin/env node" },
  clean: true,
  splitting: false,
  dts: false,
});
