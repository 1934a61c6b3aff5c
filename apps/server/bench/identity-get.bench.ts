import { createKeywardClient } from "@keyward/client";
import { benchSettings, formatRow, startKeyward } from "./lib/keyward";
import { spawnServer } from "./lib/processes";
import { ensureWrk, measure, type LoadResult } from "./lib/wrk";

/**
 * Authenticated GET /api/v1/identities/:id at 32 connections, on PostgreSQL and on PGlite, beside a
 * bare node:http server and an express + ts-rest route (the framework ceiling) measured in the same run.
 */
ensureWrk();
const settings = benchSettings();
const results: { label: string; result: LoadResult }[] = [];

for (const [label, script] of [
  ["baseline: bare node:http", "bench/servers/bare.ts"],
  ["baseline: express + ts-rest", "bench/servers/express-ts-rest.ts"],
] as const) {
  const server = await spawnServer(script);
  results.push({ label, result: await measure({ url: `${server.url}/api/v1/identities/6f1c1d2e-8a4b-4c3d-9e2f-1a2b3c4d5e6f`, ...settings }) });
  await server.stop();
}

for (const database of ["postgres", "pglite"] as const) {
  const target = await startKeyward(database);
  try {
    const admin = createKeywardClient({ baseUrl: target.url, token: target.adminToken });
    const orgs = await admin.identities.list({ query: {} });
    if (orgs.status !== 200) throw new Error("list failed");
    const identityId = orgs.body.identities[0]!.id;
    results.push({
      label: `keyward GET identity (${database})`,
      result: await measure({
        url: `${target.url}/api/v1/identities/${identityId}`,
        headers: { authorization: `Bearer ${target.adminToken}` },
        ...settings,
      }),
    });
  } finally {
    await target.stop();
  }
}

const bare = results[0]!.result.rps;
const ceiling = results[1]!.result.rps;
console.log(`\n${settings.connections} connections, ${settings.seconds}s x ${settings.rounds} rounds (median), wrk -t1`);
for (const { label, result } of results) {
  console.log(formatRow(label, result, `${((result.rps / bare) * 100).toFixed(1)}% of bare, ${((result.rps / ceiling) * 100).toFixed(1)}% of express+ts-rest`));
}
// A run that measured error responses measured the wrong thing.
if (results.some(({ result }) => result.errors > 0)) {
  console.error("some requests failed: the figures above are not valid");
  process.exitCode = 1;
}
