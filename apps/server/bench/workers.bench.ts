import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { createKeywardClient } from "@keyward/client";
import { benchSettings, formatRow, startKeyward } from "./lib/keyward";
import { PRIVILEGES, preparePrivileges } from "./lib/privileges-fixture";
import { ensureWrk, measure } from "./lib/wrk";

/** Resident memory of a process in MiB (VmRSS). */
const rssMiB = (pid: number) =>
  Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) / 1024;

const childrenOf = (pid: number) =>
  execFileSync("pgrep", ["-P", String(pid)], { encoding: "utf8" })
    .split("\n")
    .filter(Boolean)
    .map(Number);

/**
 * The compiled server (`dist/main.js`, as `pnpm start` runs it) with WORKERS=1 and
 * WORKERS=2 on PostgreSQL, the authenticated privilege read at 32 connections, in one run, and the
 * resident memory of the primary and each worker, idle and after the load. wrk and PostgreSQL share the machine's cores
 * with the workers: on two cores that caps what a second worker can add.
 */
ensureWrk();
const settings = benchSettings();
const rows: string[] = [];
const rps: number[] = [];
for (const workers of [1, 2]) {
  const target = await startKeyward("postgres", { compiled: true, workers });
  const memory = () => {
    const workerPids = workers > 1 ? childrenOf(target.pid) : [];
    return [
      `${workers > 1 ? "primary" : "server"} ${rssMiB(target.pid).toFixed(0)} MiB`,
      ...workerPids.map((pid, i) => `worker ${i + 1} ${rssMiB(pid).toFixed(0)} MiB`),
    ].join(", ");
  };
  try {
    // Idle: started and bootstrapped, nothing served since; V8 gives back start-up memory within ~30 s.
    await new Promise((resolve) => setTimeout(resolve, 30_000));
    const idle = memory();
    const paths = await preparePrivileges(createKeywardClient({ baseUrl: target.url, token: target.adminToken }));
    const result = await measure({
      origin: target.url,
      paths,
      headers: { authorization: `Bearer ${target.adminToken}` },
      ...settings,
    });
    rps.push(result.rps);
    rows.push(formatRow(`GET privilege (${PRIVILEGES} ids), WORKERS=${workers}`, result, ""));
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    rows.push(`  RSS idle (30 s after start): ${idle}; 5 s after the load: ${memory()}`);
  } finally {
    await target.stop();
  }
}
console.log(
  `\n${settings.connections} connections, ${settings.seconds}s x ${settings.rounds} rounds (median), wrk -t1`,
);
for (const row of rows) console.log(row);
console.log(`two workers / one worker: ${(rps[1]! / rps[0]!).toFixed(2)}x`);
