import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chownSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { ensureDebianPackages, freePort, waitFor } from "./debian";

const BIN = "/usr/lib/postgresql/15/bin";

const asPostgres = (command: string, args: string[]) =>
  execFileSync("runuser", ["-u", "postgres", "--", `${BIN}/${command}`, ...args], { stdio: "ignore" });

/**
 * A PostgreSQL 15 cluster of its own that dynamic-secret tests lease real roles on. Password
 * (scram) authentication over TCP, so a leased login really fails once its role is dropped or
 * expired. Published as KEYWARD_TEST_PG_TARGET_URL (a superuser URL).
 */
export const startPostgresTarget = async () => {
  ensureDebianPackages(`${BIN}/initdb`, ["postgresql-15"]);
  const uid = Number(execFileSync("id", ["-u", "postgres"]).toString().trim());
  const gid = Number(execFileSync("id", ["-g", "postgres"]).toString().trim());
  const dir = mkdtempSync(join(tmpdir(), "keyward-pg-target-"));
  chownSync(dir, uid, gid);
  const password = randomBytes(18).toString("hex");
  const pwfile = join(dir, "pwfile");
  writeFileSync(pwfile, password, { mode: 0o600 });
  chownSync(pwfile, uid, gid);
  const data = join(dir, "data");
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
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c max_connections=300 -c fsync=off -c synchronous_commit=off`;
  asPostgres("pg_ctl", ["-D", data, "-o", options, "-l", join(dir, "log"), "-w", "start"]);
  const url = `postgres://postgres:${password}@127.0.0.1:${port}/postgres`;
  await waitFor("the PostgreSQL target", async () => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.end();
    return true;
  });
  process.env.KEYWARD_TEST_PG_TARGET_URL = url;
  return () => {
    try {
      asPostgres("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
};
