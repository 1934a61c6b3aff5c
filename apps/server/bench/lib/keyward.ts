import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createKeywardClient } from "@keyward/client";
import { spawnCompiledServer, spawnServer, startPostgres } from "./processes";

export type BenchTarget = {
  label: string;
  url: string;
  pid: number;
  /** An org admin token of a freshly bootstrapped instance. */
  adminToken: string;
  /** The PostgreSQL cluster's URL (postgres only), for benches that seed rows in bulk. */
  databaseUrl?: string;
  /** The PostgreSQL postmaster's pid (postgres only), for the database's CPU per request. */
  dbPid?: number;
  stop: () => Promise<void>;
};

/** Keyward in a child process on PostgreSQL (a throwaway cluster) or on embedded PGlite. */
export const startKeyward = async (
  database: "postgres" | "pglite",
  options: { nodeArgs?: readonly string[]; compiled?: boolean; workers?: number; env?: Record<string, string> } = {},
): Promise<BenchTarget> => {
  const pg = database === "postgres" ? await startPostgres() : undefined;
  const dataDir = mkdtempSync(join(tmpdir(), "keyward-bench-"));
  const env = { DATA_DIR: dataDir, ...(pg ? { DATABASE_URL: pg.url } : {}), ...options.env };
  const server = options.compiled
    ? await spawnCompiledServer({ ...env, WORKERS: String(options.workers ?? 1) }, options.nodeArgs)
    : await spawnServer("bench/servers/keyward.ts", env, options.nodeArgs);
  const boot = await createKeywardClient({ baseUrl: server.url }).system.bootstrap({
    body: { email: "bench@keyward.test", password: "bench", organization: "Bench" },
  });
  if (boot.status !== 200) throw new Error(`bootstrap failed: ${JSON.stringify(boot.body)}`);
  return {
    label: database,
    url: server.url,
    pid: server.pid,
    adminToken: boot.body.identity.credentials.token,
    databaseUrl: pg?.url,
    dbPid: pg?.pid,
    stop: async () => {
      await server.stop();
      pg?.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
};

/** BENCH_NODE_ARGS: extra node options for the Keyward server alone (e.g. "--trace-gc"), space-separated. */
export const serverNodeArgs = () => (process.env.BENCH_NODE_ARGS ?? "").split(" ").filter(Boolean);

/** Figures from the environment so a quick run is possible: BENCH_DURATION (s), BENCH_ROUNDS, BENCH_CONNECTIONS, BENCH_DATABASES, BENCH_WARMUP (s). */
export const benchSettings = () => ({
  /** BENCH_DATABASES: which of postgres and pglite to run (both by default). */
  databases: (process.env.BENCH_DATABASES ?? "postgres,pglite")
    .split(",")
    .filter((d): d is "postgres" | "pglite" => d === "postgres" || d === "pglite"),
  seconds: Number(process.env.BENCH_DURATION ?? 10),
  rounds: Number(process.env.BENCH_ROUNDS ?? 3),
  connections: Number(process.env.BENCH_CONNECTIONS ?? 32),
  /** BENCH_WARMUP (s): the load before the measured rounds; 3 s (or BENCH_DURATION if shorter) by default. */
  warmupSeconds: Number(process.env.BENCH_WARMUP ?? Math.min(3, Number(process.env.BENCH_DURATION ?? 10))),
});

export const formatRow = (
  label: string,
  r: { rps: number; p50: number; p99: number; errors: number; cpuUs?: number },
  ratios: string,
) =>
  `${label.padEnd(44)} ${r.rps.toFixed(0).padStart(8)} req/s   p50 ${r.p50.toFixed(2).padStart(6)} ms   p99 ${r.p99.toFixed(2).padStart(7)} ms   ${r.cpuUs === undefined ? "" : `CPU ${r.cpuUs.toFixed(0).padStart(5)} µs/req   `}errors ${r.errors}   ${ratios}`;
