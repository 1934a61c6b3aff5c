import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execFileSync } from "node:child_process";
import { createServer as createNetServer, type AddressInfo } from "node:net";

const serverDir = new URL("../..", import.meta.url).pathname;

export type Spawned = { url: string; pid: number; stop: () => Promise<void> };

/** Start a script with tsx and wait for it to print `listening <port>` or Keyward's listen log. */
export const spawnServer = (
  script: string,
  env: Record<string, string> = {},
  nodeArgs: readonly string[] = [],
): Promise<Spawned> =>
  new Promise((resolve, reject) => {
    const child: ChildProcess = spawn(process.execPath, [...nodeArgs, "--import", "tsx", script], {
      cwd: serverDir,
      env: { ...process.env, LOG_LEVEL: "warn", ...env },
      stdio: ["ignore", "pipe", "inherit"],
    });
    let buffered = "";
    const onData = (chunk: Buffer) => {
      buffered += chunk.toString();
      const match = /listening (\d+)/.exec(buffered);
      if (!match) return;
      child.stdout?.off("data", onData);
      resolve({
        url: `http://127.0.0.1:${match[1]}`,
        pid: child.pid!,
        stop: () =>
          new Promise<void>((done) => {
            child.once("exit", () => done());
            child.kill("SIGTERM");
          }),
      });
    };
    child.stdout?.on("data", onData);
    child.once("exit", (code) => reject(new Error(`${script} exited with ${code}`)));
  });

export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const probe = createNetServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });

/**
 * The compiled server (`dist/main.js`, built first, as `pnpm start` runs it) with one worker: V8
 * profiles then name its functions, which the tsx-loaded source does not give.
 */
export const spawnCompiledServer = async (
  env: Record<string, string>,
  nodeArgs: readonly string[] = [],
): Promise<Spawned> => {
  execFileSync(process.execPath, [join(serverDir, "node_modules/tsup/dist/cli-default.js")], {
    cwd: serverDir,
    stdio: "ignore",
  });
  const port = await freePort();
  const child = spawn(process.execPath, [...nodeArgs, "dist/main.js"], {
    cwd: serverDir,
    env: { ...process.env, LOG_LEVEL: "warn", WORKERS: "1", PORT: String(port), ...env },
    stdio: ["ignore", "inherit", "inherit"],
  });
  const url = `http://127.0.0.1:${port}`;
  for (let tries = 0; ; tries += 1) {
    if (child.exitCode !== null) throw new Error(`dist/main.js exited with ${child.exitCode}`);
    const up = await fetch(`${url}/api/status`).then(
      () => true,
      () => false,
    );
    if (up) break;
    if (tries > 600) throw new Error("dist/main.js did not start within a minute");
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    url,
    pid: child.pid!,
    stop: () =>
      new Promise<void>((done) => {
        child.once("exit", () => done());
        child.kill("SIGTERM");
      }),
  };
};

/** A throwaway PostgreSQL 15 cluster, as CI starts one. */
export const startPostgres = async (): Promise<{ url: string; log: string; pid: number; stop: () => void }> => {
  const bin = "/usr/lib/postgresql/15/bin";
  const dir = mkdtempSync(join(tmpdir(), "keyward-bench-pg-"));
  execFileSync("chown", ["postgres", dir]);
  const port = 20_000 + Math.floor(Math.random() * 20_000);
  const as = (args: string[]) => execFileSync("runuser", ["-u", "postgres", "--", ...args], { stdio: "ignore" });
  as([`${bin}/initdb`, "-D", `${dir}/data`, "-A", "trust", "-U", "postgres"]);
  as([
    `${bin}/pg_ctl`,
    "-D",
    `${dir}/data`,
    "-l",
    `${dir}/log`,
    "-w",
    "-o",
    // BENCH_PG_OPTIONS: more server settings, e.g. "-c shared_preload_libraries=pg_stat_statements".
    `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 ${process.env.BENCH_PG_OPTIONS ?? ""}`,
    "start",
  ]);
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    log: `${dir}/log`,
    /** The postmaster: its children are the backends whose CPU `processTreeCpuUs` adds up. */
    pid: Number.parseInt(readFileSync(`${dir}/data/postmaster.pid`, "utf8").split("\n")[0]!, 10),
    /** Stops the server and removes its cluster (an audit-scale run leaves ~10 GB otherwise). */
    stop: () => {
      as([`${bin}/pg_ctl`, "-D", `${dir}/data`, "-m", "fast", "stop"]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
};
