import { execFileSync } from "node:child_process";
import { chownSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { ensureDebianPackages, freePort, waitFor } from "../services/debian";

const BIN = "/usr/lib/postgresql/15/bin";

const asPostgres = (command: string, args: string[]) =>
  execFileSync("runuser", ["-u", "postgres", "--", `${BIN}/${command}`, ...args], { stdio: "ignore" });

export type PrivatePostgres = {
  url: string;
  /** Stop the server (fast shutdown: connections are terminated). */
  stop: () => void;
  start: () => Promise<void>;
  /** SIGSTOP the postmaster and every backend: connections hang instead of failing. */
  freeze: () => void;
  thaw: () => void;
  destroy: () => void;
};

/**
 * A PostgreSQL 15 cluster of this test file's own, which it may stop and freeze without disturbing
 * the server the rest of the suite uses.
 */
export const startPrivatePostgres = async (): Promise<PrivatePostgres> => {
  ensureDebianPackages(`${BIN}/initdb`, ["postgresql-15"]);
  const uid = Number(execFileSync("id", ["-u", "postgres"]).toString().trim());
  const dir = mkdtempSync(join(tmpdir(), "keyward-pg-private-"));
  chownSync(dir, uid, Number(execFileSync("id", ["-g", "postgres"]).toString().trim()));
  const data = join(dir, "data");
  asPostgres("initdb", ["-D", data, "-U", "postgres", "--auth=trust"]);
  const port = await freePort();
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c max_connections=100 -c fsync=off -c synchronous_commit=off`;
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const start = async () => {
    asPostgres("pg_ctl", ["-D", data, "-o", options, "-l", join(dir, "log"), "-w", "start"]);
    await waitFor("the private PostgreSQL", async () => {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      await client.end();
      return true;
    });
  };
  await start();
  const pids = () => {
    const postmaster = readFileSync(join(data, "postmaster.pid"), "utf8").split("\n")[0]!.trim();
    const children = execFileSync("ps", ["--ppid", postmaster, "-o", "pid="]).toString().trim().split(/\s+/);
    return [postmaster, ...children].filter(Boolean);
  };
  const signal = (name: string) => execFileSync("kill", [`-${name}`, ...pids()], { stdio: "ignore" });
  return {
    url,
    start,
    stop: () => asPostgres("pg_ctl", ["-D", data, "-m", "fast", "-w", "stop"]),
    freeze: () => signal("STOP"),
    thaw: () => signal("CONT"),
    destroy: () => {
      try {
        asPostgres("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"]);
      } catch {
        // already stopped
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
};
