import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createKeywardClient } from "@keyward/client";
import { spawnServer, startPostgres } from "./processes";

export type BenchTarget = {
  label: string;
  url: string;
  /** An org admin token of a freshly bootstrapped instance. */
  adminToken: string;
  stop: () => Promise<void>;
};

/** Keyward in a child process on PostgreSQL (a throwaway cluster) or on embedded PGlite. */
export const startKeyward = async (database: "postgres" | "pglite"): Promise<BenchTarget> => {
  const pg = database === "postgres" ? await startPostgres() : undefined;
  const dataDir = mkdtempSync(join(tmpdir(), "keyward-bench-"));
  const server = await spawnServer("bench/servers/keyward.ts", {
    DATA_DIR: dataDir,
    ...(pg ? { DATABASE_URL: pg.url } : {}),
  });
  const boot = await createKeywardClient({ baseUrl: server.url }).system.bootstrap({
    body: { email: "bench@keyward.test", password: "bench", organization: "Bench" },
  });
  if (boot.status !== 200) throw new Error(`bootstrap failed: ${JSON.stringify(boot.body)}`);
  return {
    label: database,
    url: server.url,
    adminToken: boot.body.identity.credentials.token,
    stop: async () => {
      await server.stop();
      pg?.stop();
    },
  };
};

/** Figures from the environment so a quick run is possible: BENCH_DURATION (s), BENCH_ROUNDS, BENCH_CONNECTIONS. */
export const benchSettings = () => ({
  seconds: Number(process.env.BENCH_DURATION ?? 10),
  rounds: Number(process.env.BENCH_ROUNDS ?? 3),
  connections: Number(process.env.BENCH_CONNECTIONS ?? 32),
  warmupSeconds: Math.min(3, Number(process.env.BENCH_DURATION ?? 10)),
});

export const formatRow = (
  label: string,
  r: { rps: number; p50: number; p99: number; errors: number },
  ratios: string,
) =>
  `${label.padEnd(44)} ${r.rps.toFixed(0).padStart(8)} req/s   p50 ${r.p50.toFixed(2).padStart(6)} ms   p99 ${r.p99.toFixed(2).padStart(7)} ms   errors ${r.errors}   ${ratios}`;
