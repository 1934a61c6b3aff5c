import { join } from "node:path";
import { createKeywardClient, type KeywardClient } from "@keyward/client";
import { benchSettings, formatRow, startKeyward } from "./keyward";
import { spawnServer } from "./processes";
import { ensureWrk, measure, type LoadResult } from "./wrk";
import { summariseProfile } from "./profile";

/** Fail a benchmark's setup loudly: figures measured against error responses mean nothing. */
export const setupOk = <T extends { status: number; body: unknown }>(res: T) => {
  if (res.status !== 200) throw new Error(`setup failed: ${JSON.stringify(res.body)}`);
  return res.body as Extract<T, { status: 200 }>["body"];
};

/**
 * One authenticated Keyward endpoint under wrk, on PostgreSQL and on PGlite, beside a bare
 * node:http server and the express + ts-rest ceiling measured in the same run; prints req/s,
 * p50/p99 and the ratios to both baselines. `prepare` creates what the endpoint reads and returns
 * its paths: requests go to each in turn, so concurrent requests read different rows.
 */
export const benchEndpoint = async (
  label: string,
  prepare: (admin: KeywardClient) => Promise<string[] | { paths: string[]; postBodies: string[] }>,
) => {
  ensureWrk();
  const settings = benchSettings();
  const profileDir = process.env.BENCH_PROFILE;
  if (profileDir) {
    await profileEndpoint(label, prepare, profileDir);
    return;
  }
  const results: { label: string; result: LoadResult }[] = [];

  for (const [name, script] of [
    ["baseline: bare node:http", "bench/servers/bare.ts"],
    ["baseline: express + ts-rest", "bench/servers/express-ts-rest.ts"],
  ] as const) {
    const server = await spawnServer(script);
    results.push({
      label: name,
      result: await measure({
        origin: server.url,
        pid: server.pid,
        paths: ["/api/v1/identities/6f1c1d2e-8a4b-4c3d-9e2f-1a2b3c4d5e6f"],
        ...settings,
      }),
    });
    await server.stop();
  }

  for (const database of settings.databases) {
    const target = await startKeyward(database);
    try {
      const prepared = await prepare(createKeywardClient({ baseUrl: target.url, token: target.adminToken }));
      const requests = Array.isArray(prepared) ? { paths: prepared } : prepared;
      results.push({
        label: `keyward ${label} (${database})`,
        result: await measure({
          origin: target.url,
          pid: target.pid,
          ...requests,
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
  console.log(
    `\n${settings.connections} connections, ${settings.seconds}s x ${settings.rounds} rounds (median), wrk -t1`,
  );
  const ceilingCpu = results[1]!.result.cpuUs;
  for (const { label: name, result } of results) {
    // By CPU per request too: the share that holds when wrk and PostgreSQL compete for the same cores.
    const byCpu =
      ceilingCpu !== undefined && result.cpuUs !== undefined
        ? `, ${((ceilingCpu / result.cpuUs) * 100).toFixed(1)}% by CPU per request`
        : "";
    console.log(
      formatRow(
        name,
        result,
        `${((result.rps / bare) * 100).toFixed(1)}% of bare, ${((result.rps / ceiling) * 100).toFixed(1)}% of express+ts-rest${byCpu}`,
      ),
    );
  }
  if (results.some(({ result }) => result.errors > 0)) {
    console.error("some requests failed: the figures above are not valid");
    process.exitCode = 1;
  }
};

/**
 * `BENCH_PROFILE=<dir>`: the endpoint on PostgreSQL only, served by the compiled build with V8's
 * sampling profiler on, then a
 * summary of where the server's CPU time went (the profile stays in `dir` for a closer look).
 */
const profileEndpoint = async (label: string, prepare: Parameters<typeof benchEndpoint>[1], parent: string) => {
  const settings = benchSettings();
  const dir = join(parent, label.replace(/[^\w-]+/g, "-"));
  const target = await startKeyward("postgres", {
    nodeArgs: ["--cpu-prof", `--cpu-prof-dir=${dir}`],
    compiled: true,
  });
  try {
    const prepared = await prepare(createKeywardClient({ baseUrl: target.url, token: target.adminToken }));
    const requests = Array.isArray(prepared) ? { paths: prepared } : prepared;
    const result = await measure({
      origin: target.url,
      pid: target.pid,
      ...requests,
      headers: { authorization: `Bearer ${target.adminToken}` },
      ...settings,
    });
    console.log(formatRow(`keyward ${label} (postgres, profiled)`, result, ""));
  } finally {
    await target.stop();
  }
  console.log(summariseProfile(dir, 30, settings.seconds * settings.rounds));
};
