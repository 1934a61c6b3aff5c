import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chownSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { ensureDebianPackage, freePort } from "./debian";

/** Debian's postgresql-15 binaries. */
export const PG15_BIN = "/usr/lib/postgresql/15/bin";

const asPostgres = (command: string, args: string[]) =>
  execFileSync("runuser", ["-u", "postgres", "--", `${PG15_BIN}/${command}`, ...args], {
    stdio: "ignore",
    timeout: 120_000,
  });

export type Postgres15Options = {
  /** Names the temporary folder (`keyward-<name>-…`), so a leftover says which suite made it. */
  name: string;
  /** PostgreSQL's own default (100) when not given. */
  maxConnections?: number;
};

export type Postgres15 = {
  /** A superuser URL with the password. */
  url: string;
  host: string;
  port: number;
  password: string;
  /** Stops the server at once and removes its folder: the end of the cluster. */
  stop: () => void;
  /** Stops the server (fast shutdown: connections are terminated), keeping its data for `restart`. */
  shutDown: () => void;
  /** Starts the server again after `shutDown`, on the same port, until a password login works. */
  restart: () => Promise<void>;
  /** SIGSTOP the postmaster and every backend: connections hang instead of failing. */
  freeze: () => void;
  /** SIGCONT what `freeze` stopped. */
  thaw: () => void;
};

/** Until a password login over TCP works (pg_ctl -w checks the socket only), for at most 30 s. */
const waitForLogin = async (url: string) => {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const client = new pg.Client({ connectionString: url });
    try {
      await client.connect();
      await client.end();
      return;
    } catch (error) {
      await client.end().catch(() => undefined);
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
};

/**
 * A PostgreSQL 15 cluster of its own (Debian's postgresql-15, installed when missing) in a temporary
 * folder, on a free loopback port, without fsync. Password (scram) authentication over TCP, so a
 * login leased by a dynamic secret really fails once its role is dropped or expired.
 */
export const startPostgres15 = async ({ name, maxConnections }: Postgres15Options): Promise<Postgres15> => {
  ensureDebianPackage(`${PG15_BIN}/initdb`, ["postgresql-15"]);
  const uid = Number(execFileSync("id", ["-u", "postgres"]).toString().trim());
  const gid = Number(execFileSync("id", ["-g", "postgres"]).toString().trim());
  const dir = mkdtempSync(join(tmpdir(), `keyward-${name}-`));
  chownSync(dir, uid, gid);
  const password = randomBytes(18).toString("hex");
  const pwfile = join(dir, "pwfile");
  writeFileSync(pwfile, password, { mode: 0o600 });
  chownSync(pwfile, uid, gid);
  const data = join(dir, "data");
  const stop = () => {
    try {
      asPostgres("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"]);
    } catch {
      // already stopped (shutDown, or a failed start)
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
  asPostgres("initdb", [
    "-D",
    data,
    "-U",
    "postgres",
    "--auth-local=trust",
    "--auth-host=scram-sha-256",
    `--pwfile=${pwfile}`,
  ]);
  const port = await freePort();
  const settings = [
    `-p ${port}`,
    `-k ${dir}`,
    "-c listen_addresses=127.0.0.1",
    ...(maxConnections ? [`-c max_connections=${maxConnections}`] : []),
    "-c fsync=off",
    "-c synchronous_commit=off",
  ];
  const host = "127.0.0.1";
  const url = `postgres://postgres:${password}@${host}:${port}/postgres`;
  const start = async () => {
    // -w: returns once the server accepts connections.
    asPostgres("pg_ctl", ["-D", data, "-o", settings.join(" "), "-l", join(dir, "log"), "-w", "start"]);
    await waitForLogin(url);
  };
  try {
    await start();
  } catch (error) {
    stop();
    throw error;
  }
  const pids = () => {
    const postmaster = readFileSync(join(data, "postmaster.pid"), "utf8").split("\n")[0]!.trim();
    const children = execFileSync("ps", ["--ppid", postmaster, "-o", "pid="]).toString().trim().split(/\s+/);
    return [postmaster, ...children].filter(Boolean);
  };
  const signal = (name: string) => execFileSync("kill", [`-${name}`, ...pids()], { stdio: "ignore" });
  return {
    url,
    host,
    port,
    password,
    stop,
    shutDown: () => asPostgres("pg_ctl", ["-D", data, "-m", "fast", "-w", "stop"]),
    restart: start,
    freeze: () => signal("STOP"),
    thaw: () => signal("CONT"),
  };
};
