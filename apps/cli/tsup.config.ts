import { defineConfig } from "tsup";
import { contractRouteTable } from "./route-table";

/**
 * One executable file with everything it runs bundled in (the client, the contract, zod, ts-rest,
 * commander, …): a start reads one module instead of resolving and lexing a few hundred CommonJS ones,
 * which took a third of the CPU of a `keyward --help`. The packages' CommonJS code finds node's
 * built-ins through the `require` the banner defines. The client's contract is bundled as a route table
 * (see route-table.ts): a start builds no schema.
 */
export default defineConfig({
  entry: { keyward: "src/main.ts" },
  format: ["esm"],
  platform: "node",
  target: "node20",
  noExternal: [/.*/],
  banner: {
    js: [
      "#!/usr/bin/env node",
      'import { createRequire as __keywardRequire } from "node:module";',
      "const require = __keywardRequire(import.meta.url);",
    ].join("\n"),
  },
  esbuildPlugins: [contractRouteTable],
  clean: true,
  splitting: false,
  dts: false,
});
