import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chownSync, existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const PG_BIN = "/usr/lib/postgresql/15/bin";

const asPostgres = (command: string, args: string[]) =>
  execFileSync("runuser", ["-u", "postgres", "--", `${PG_BIN}/${command}`, ...args], { stdio: "ignore" });

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });

/**
 * A PostgreSQL 15 cluster of its own for lease commands to lease real roles on (Debian's
 * postgresql-15, installed when missing), with password authentication over TCP so a revoked
 * lease's login really fails. Returns its superuser URL and a stop function.
 */
export const startPostgresTarget = async () => {
  if (!existsSync(`${PG_BIN}/initdb`)) {
    const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
    execFileSync("apt-get", ["update", "-qq"], { stdio: "ignore", env });
    execFileSync("apt-get", ["install", "-y", "-qq", "--no-install-recommends", "postgresql-15"], {
      stdio: "ignore",
      env,
    });
  }
  const uid = Number(execFileSync("id", ["-u", "postgres"]).toString().trim());
  const gid = Number(execFileSync("id", ["-g", "postgres"]).toString().trim());
  const dir = mkdtempSync(join(tmpdir(), "keyward-cli-pg-"));
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
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off`;
  // -w: returns once the server accepts connections.
  asPostgres("pg_ctl", ["-D", data, "-o", options, "-l", join(dir, "log"), "-w", "start"]);
  const url = `postgres://postgres:${password}@127.0.0.1:${port}/postgres`;
  const stop = () => {
    try {
      asPostgres("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
  return { url, stop };
};

/** Whether a user and password log in to the target (through Debian's psql, so the test needs no driver). */
export const canLogin = (targetUrl: string, user: string, password: string) => {
  const { hostname, port } = new URL(targetUrl);
  try {
    execFileSync(
      `${PG_BIN}/psql`,
      ["-h", hostname, "-p", port, "-U", user, "-d", "postgres", "-tAc", "select 1", "-w"],
      { env: { PATH: process.env.PATH, PGPASSWORD: password, PGCONNECT_TIMEOUT: "5" }, stdio: "pipe" },
    );
    return true;
  } catch {
    return false;
  }
};
