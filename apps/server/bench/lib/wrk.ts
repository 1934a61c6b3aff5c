import { execFile, execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

/** wrk (Debian) generates the load from its own process, so the server under test keeps a core. */
export const ensureWrk = () => {
  if (existsSync("/usr/bin/wrk")) return;
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  execFileSync("apt-get", ["update", "-qq"], { stdio: "ignore", env });
  execFileSync("apt-get", ["install", "-y", "-qq", "wrk"], { stdio: "ignore", env });
};

export type LoadResult = {
  rps: number;
  p50: number;
  p99: number;
  requests: number;
  errors: number;
  /** The server's CPU time per request in µs (user + system, from /proc), when its pid is known. */
  cpuUs?: number;
  /** The database's CPU time per request in µs (its server process and every child), when its pid is known. */
  dbCpuUs?: number;
};

/** A process's CPU time so far in µs (utime + stime of /proc/<pid>/stat, in clock ticks of 10 ms). */
const cpuTimeUs = (pid: number) => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
};

/** CPU time so far in µs of `pid` and its children (a PostgreSQL postmaster and its backends). */
const processTreeCpuUs = (pid: number) => {
  let total = 0;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const fields = readFileSync(`/proc/${entry}/stat`, "utf8").split(") ")[1]!.split(" ");
      // utime + stime; for the process itself also cutime + cstime, what its children that ended
      // (PostgreSQL's autovacuum workers, say) used, so the sum never goes back.
      if (Number(entry) === pid)
        total += (Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) * 10_000;
      else if (Number(fields[1]) === pid) total += (Number(fields[11]) + Number(fields[12])) * 10_000;
    } catch {
      // The process ended meanwhile.
    }
  }
  return total;
};

const toMs = (value: string) => {
  const match = /^([\d.]+)(us|ms|s|m)$/.exec(value.trim());
  if (!match) return Number.NaN;
  const n = Number.parseFloat(match[1]!);
  return match[2] === "us" ? n / 1000 : match[2] === "ms" ? n : match[2] === "s" ? n * 1000 : n * 60_000;
};

/** A wrk script sending each request to the next of `paths` in turn (with the matching body, if any). */
const rotatingScript = (paths: readonly string[], post?: readonly string[]) => {
  const file = join(mkdtempSync(join(tmpdir(), "keyward-wrk-")), "paths.lua");
  const list = paths.map((path) => JSON.stringify(path)).join(",\n  ");
  const bodies = (post ?? []).map((body) => JSON.stringify(body)).join(",\n  ");
  const format = post ? `wrk.format("POST", paths[i], nil, bodies[i])` : `wrk.format(nil, paths[i])`;
  writeFileSync(
    file,
    `local paths = {\n  ${list}\n}\nlocal bodies = {\n  ${bodies}\n}\nlocal i = 0\nrequest = function()\n  i = i % #paths + 1\n  return ${format}\nend\n`,
  );
  return file;
};

export type LoadOptions = {
  /** The server's origin; requests go to `paths` in turn. */
  origin: string;
  paths: readonly string[];
  /** JSON bodies, one per path: the requests are then POSTs. */
  postBodies?: readonly string[];
  headers?: Record<string, string>;
  /** A wrk Lua script of the bench's own, in place of the rotating one `paths` and `postBodies` make. */
  script?: string;
  connections: number;
  seconds: number;
};

/** One wrk run: requests/s, p50 and p99 latency in ms, and non-2xx/socket errors. */
export const runWrk = async (options: LoadOptions): Promise<LoadResult> => {
  const args = ["-t1", `-c${options.connections}`, `-d${options.seconds}s`, "--latency"];
  for (const [k, v] of Object.entries(options.headers ?? {})) args.push("-H", `${k}: ${v}`);
  if (options.postBodies) args.push("-H", "content-type: application/json");
  if (options.script) args.push("-s", options.script);
  else if (options.paths.length > 1 || options.postBodies)
    args.push("-s", rotatingScript(options.paths, options.postBodies));
  args.push(`${options.origin}${options.paths[0]}`);
  const { stdout } = await run("wrk", args, { maxBuffer: 1 << 20 });
  const rps = Number.parseFloat(/Requests\/sec:\s+([\d.]+)/.exec(stdout)?.[1] ?? "NaN");
  const p50 = toMs(/\s50%\s+(\S+)/.exec(stdout)?.[1] ?? "");
  const p99 = toMs(/\s99%\s+(\S+)/.exec(stdout)?.[1] ?? "");
  const requests = Number.parseInt(/(\d+) requests in/.exec(stdout)?.[1] ?? "0", 10);
  const non2xx = Number.parseInt(/Non-2xx or 3xx responses:\s+(\d+)/.exec(stdout)?.[1] ?? "0", 10);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(stdout);
  const socketErrors = socket ? socket.slice(1).reduce((sum, n) => sum + Number.parseInt(n, 10), 0) : 0;
  return { rps, p50, p99, requests, errors: non2xx + socketErrors };
};

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

type Target = LoadOptions & { pid?: number; dbPid?: number };

/** One wrk run against a target, with the server's CPU time per request when its pid is known. */
const runMeasured = async (target: Target): Promise<LoadResult> => {
  const before = target.pid ? cpuTimeUs(target.pid) : 0;
  const dbBefore = target.dbPid ? processTreeCpuUs(target.dbPid) : 0;
  const result = await runWrk(target);
  if (target.pid && result.requests > 0) result.cpuUs = (cpuTimeUs(target.pid) - before) / result.requests;
  if (target.dbPid && result.requests > 0)
    result.dbCpuUs = (processTreeCpuUs(target.dbPid) - dbBefore) / result.requests;
  return result;
};

/**
 * Warm up, then the median (by req/s) of `rounds` runs. With the server's `pid`, each run also
 * reports the server's CPU time per request: unlike req/s, it hardly moves when other work shares
 * the machine.
 */
export const measure = async (options: Target & { rounds: number; warmupSeconds: number }): Promise<LoadResult> => {
  await runWrk({ ...options, seconds: options.warmupSeconds });
  const results: LoadResult[] = [];
  for (let i = 0; i < options.rounds; i += 1) results.push(await runMeasured(options));
  const mid = median(results.map((r) => r.rps));
  return results.find((r) => r.rps === mid)!;
};

/**
 * Several targets measured in turn, round after round (A, B, C, A, B, C, ...), so each round's
 * figures of one target can be compared with the others' taken moments apart: on a machine whose
 * speed drifts between minutes, a ratio of figures measured minutes apart says little.
 * Returns each target's runs, round by round.
 */
export const measureInterleaved = async (
  targets: readonly Target[],
  options: { rounds: number; warmupSeconds: number },
): Promise<LoadResult[][]> => {
  for (const target of targets) await runWrk({ ...target, seconds: options.warmupSeconds });
  const runs: LoadResult[][] = targets.map(() => []);
  for (let round = 0; round < options.rounds; round += 1) {
    for (const [i, target] of targets.entries()) runs[i]!.push(await runMeasured(target));
  }
  return runs;
};

export { median };
