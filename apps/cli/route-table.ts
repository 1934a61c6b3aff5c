import { createRequire } from "node:module";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import type { Options } from "tsup";

/** esbuild's plugin type, as tsup takes it (esbuild itself is tsup's dependency, not ours). */
type Plugin = NonNullable<Options["esbuildPlugins"]>[number];

const contractEntry = fileURLToPath(new URL("../../packages/contract/src/index.ts", import.meta.url));
const contractCommon = fileURLToPath(new URL("../../packages/contract/src/common.ts", import.meta.url));

/** What the typed client reads of a route: where and how to send it, and which statuses it declares. */
type RouteEntry = { method: string; path: string; contentType?: string; responses: Record<string, null> };
type RouteTree = { [key: string]: RouteTree | RouteEntry };

const isRoute = (value: object): value is { method: string; path: string; contentType?: unknown; responses: object } =>
  typeof (value as { method?: unknown }).method === "string" && typeof (value as { path?: unknown }).path === "string";

/** The contract's routers reduced to what a request needs: no schema, so nothing to build at start. */
const routeTree = (router: object): RouteTree =>
  Object.fromEntries(
    Object.entries(router).map(([key, value]: [string, object]) => {
      if (!isRoute(value)) return [key, routeTree(value)];
      const entry: RouteEntry = {
        method: value.method,
        path: value.path,
        responses: Object.fromEntries(Object.keys(value.responses).map((status) => [status, null])),
      };
      if (typeof value.contentType === "string") entry.contentType = value.contentType;
      return [key, entry];
    }),
  );

/**
 * The CLI's client without the contract's schemas. `createKeywardClient` hands ts-rest the whole contract,
 * whose few thousand zod schemas are built when the module loads: about a third of a `keyward` start. A
 * request needs only each route's method, path, content type and declared statuses (the CLI never
 * validates answers against the schemas), so the client's import of `@keyward/contract` is served a
 * table of those, computed from the real contract at build time, plus the error body's schema that `ok`
 * parses with. The types still come from the contract: only the bundle changes.
 */
export const contractRouteTable: Plugin = {
  name: "keyward-contract-route-table",
  setup(build) {
    build.onResolve({ filter: /^@keyward\/contract$/ }, (args) =>
      args.importer.includes("/packages/client/src/") ? { path: "route-table", namespace: "keyward-contract" } : null,
    );
    build.onLoad({ filter: /.*/, namespace: "keyward-contract" }, async () => {
      const bundled = await build.esbuild.build({
        entryPoints: [contractEntry],
        bundle: true,
        platform: "node",
        format: "cjs",
        write: false,
        logLevel: "silent",
      });
      const loaded = { exports: {} as { contract?: object } };
      // The contract as just bundled, run once at build time.
      new Function("module", "exports", "require", bundled.outputFiles[0]!.text)(
        loaded,
        loaded.exports,
        createRequire(contractEntry),
      );
      if (!loaded.exports.contract) throw new Error("@keyward/contract exports no contract");
      return {
        contents: [
          `export { ErrorBodySchema } from ${JSON.stringify(contractCommon)};`,
          `export const contract = ${JSON.stringify(routeTree(loaded.exports.contract))};`,
        ].join("\n"),
        loader: "js",
        resolveDir: dirname(contractCommon),
      };
    });
  },
};
