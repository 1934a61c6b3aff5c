import { join } from "node:path";
import { createKeywardClient, type KeywardClient } from "@keyward/client";
import { benchSettings, formatRow, serverNodeArgs, startKeyward } from "./keyward";
import { spawnServer, type Spawned } from "./processes";
import { ensureWrk, measure, measureInterleaved, median, type LoadResult } from "./wrk";
import { summariseProfile } from "./profile";

/** Fail a benchmark's setup loudly: figures measured against error responses mean nothing. */
export const setupOk = <T extends { status: number; body: unknown }>(res: T) => {
  if (res.status !== 200) throw new Error(`setup failed: ${JSON.stringify(res.body)}`);
  return res.body as Extract<T, { status: 200 }>["body"];
};

/** What the baselines serve: the shape of GET /api/v1/identities/:id, from memory. */
const BASELINE_PATHS = ["/api/v1/identities/6f1c1d2e-8a4b-4c3d-9e2f-1a2b3c4d5e6f"];

const percent = (ratio: number) => `${(ratio * 100).toFixed(1)}%`;

/**
 * A baseline of one endpoint's own (a list's floor, say): a server `prepare` started for the data it
 * made, measured in the same rounds as the rest; the runner stops it.
 */
export type ExtraBaseline = { label: string; server: Spawned; paths: string[] };

/** Each server once: baselines may share one (two routes of a floor, say). */
const stopBaselines = (baselines: readonly ExtraBaseline[]) =>
  Promise.all([...new Set(baselines.map(({ server }) => server))].map((server) => server.stop()));

type Prepared = string[] | { paths: string[]; postBodies?: string[]; baselines?: ExtraBaseline[] };

/** What `prepare` may need of the Keyward it prepares: the database it runs on (PostgreSQL only). */
type PrepareTarget = { databaseUrl?: string };

/**
 * One authenticated Keyward endpoint under wrk, on PostgreSQL and on PGlite, beside a bare
 * node:http server and the express + ts-rest ceiling (and any baselines of the endpoint's own). All
 * are measured in turn, round after round, and each ratio is the median of the rounds' own ratios:
 * the machine's speed drifts between minutes, so only figures taken moments apart compare. Prints
 * req/s, p50/p99, the server's CPU time per request and the ratios to both baselines (by req/s, and
 * by CPU per request, which holds when wrk and PostgreSQL compete for the same cores). `prepare`
 * creates what the endpoint reads and returns its paths: requests go to each in turn, so concurrent
 * requests read different rows.
 */
export const benchEndpoint = async (
  label: string,
  prepare: (admin: KeywardClient, target: PrepareTarget) => Promise<Prepared>,
) => {
  ensureWrk();
  const settings = benchSettings();
  const profileDir = process.env.BENCH_PROFILE;
  if (profileDir) {
    await profileEndpoint(label, prepare, profileDir);
    return;
  }
  const bare = await spawnServer("bench/servers/bare.ts");
  const ceiling = await spawnServer("bench/servers/express-ts-rest.ts");
  console.log(
    `\n${settings.connections} connections, ${settings.seconds}s x ${settings.rounds} rounds (median), wrk -t1, baselines and Keyward in turn`,
  );
  try {
    for (const database of settings.databases) {
      const target = await startKeyward(database, { nodeArgs: serverNodeArgs() });
      try {
        const admin = createKeywardClient({ baseUrl: target.url, token: target.adminToken });
        const prepared = await prepare(admin, { databaseUrl: target.databaseUrl });
        const { baselines = [], ...requests } = Array.isArray(prepared) ? { paths: prepared } : prepared;
        const load = { connections: settings.connections, seconds: settings.seconds };
        const [bareRuns, ceilingRuns, keywardRuns, ...extraRuns] = await measureInterleaved(
          [
            { origin: bare.url, pid: bare.pid, paths: BASELINE_PATHS, ...load },
            { origin: ceiling.url, pid: ceiling.pid, paths: BASELINE_PATHS, ...load },
            {
              origin: target.url,
              pid: target.pid,
              ...requests,
              headers: { authorization: `Bearer ${target.adminToken}` },
              ...load,
            },
            ...baselines.map(({ server, paths }) => ({ origin: server.url, pid: server.pid, paths, ...load })),
          ],
          settings,
        ).finally(() => stopBaselines(baselines));
        /** The median over rounds of a figure computed from one round's runs. */
        const paired = (figure: (round: number) => number) => median(keywardRuns!.map((_, round) => figure(round)));
        const typical = (runs: LoadResult[]) => {
          const mid = median(runs.map((r) => r.rps));
          return runs.find((r) => r.rps === mid)!;
        };
        const vsBare = (runs: LoadResult[]) => paired((r) => runs[r]!.rps / bareRuns![r]!.rps);
        const vsCeiling = (runs: LoadResult[]) => paired((r) => runs[r]!.rps / ceilingRuns![r]!.rps);
        /** How far the rounds' own ratios to the ceiling spread: the machine's noise, next to the median. */
        const ceilingSpread = (runs: LoadResult[]) => {
          const ratios = runs.map((run, r) => run.rps / ceilingRuns![r]!.rps);
          const [low, high] = [Math.min(...ratios), Math.max(...ratios)];
          return high - low < 0.0005 ? "" : ` (rounds ${percent(low)}–${percent(high)})`;
        };
        const cpuVsCeiling = (runs: LoadResult[]) =>
          paired((r) => (ceilingRuns![r]!.cpuUs ?? Number.NaN) / (runs[r]!.cpuUs ?? Number.NaN));
        for (const [name, runs] of [
          ["baseline: bare node:http", bareRuns!],
          ["baseline: express + ts-rest", ceilingRuns!],
          ...baselines.map(({ label: name }, i) => [`baseline: ${name}`, extraRuns[i]!] as const),
          [`keyward ${label} (${database})`, keywardRuns!],
        ] as const) {
          console.log(
            formatRow(
              name,
              typical(runs),
              `${percent(vsBare(runs))} of bare, ${percent(vsCeiling(runs))} of express+ts-rest${ceilingSpread(runs)}, ` +
                `${percent(cpuVsCeiling(runs))} by CPU per request`,
            ),
          );
        }
        baselines.forEach(({ label: name }, i) =>
          console.log(
            `  keyward / ${name}: ${percent(paired((r) => keywardRuns![r]!.rps / extraRuns[i]![r]!.rps))} by req/s, ` +
              `${paired((r) => (keywardRuns![r]!.cpuUs ?? Number.NaN) / (extraRuns[i]![r]!.cpuUs ?? Number.NaN)).toFixed(2)}x its CPU per request`,
          ),
        );
        if ([bareRuns!, ceilingRuns!, keywardRuns!, ...extraRuns].some((runs) => runs.some((r) => r.errors > 0))) {
          console.error("some requests failed: the figures above are not valid");
          process.exitCode = 1;
        }
      } finally {
        await target.stop();
      }
    }
  } finally {
    await bare.stop();
    await ceiling.stop();
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
    const admin = createKeywardClient({ baseUrl: target.url, token: target.adminToken });
    const prepared = await prepare(admin, { databaseUrl: target.databaseUrl });
    const { baselines = [], ...requests } = Array.isArray(prepared) ? { paths: prepared } : prepared;
    await stopBaselines(baselines);
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
