import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chownSync, existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";

let aptUpdated = false;

/** Install a Debian package when its binary is missing (CI and fresh machines run as root). */
export const ensureDebianPackage = (binary: string, packages: string[]) => {
  if (existsSync(binary)) return;
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  if (!aptUpdated) {
    execFileSync("apt-get", ["update", "-qq"], { stdio: "ignore", env, timeout: 300_000 });
    aptUpdated = true;
  }
  execFileSync("apt-get", ["install", "-y", "-qq", "--no-install-recommends", ...packages], {
    stdio: "ignore",
    env,
    timeout: 600_000,
  });
  if (!existsSync(binary)) throw new Error(`installing ${packages.join(" ")} did not provide ${binary}`);
};

/** Debian's Chromium: the browser the tests drive (nothing is downloaded by playwright). */
export const chromiumPath = () => {
  const path = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
  ensureDebianPackage(path, ["chromium"]);
  return path;
};

export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });

const PG_BIN = "/usr/lib/postgresql/15/bin";

const asPostgres = (command: string, args: string[]) =>
  execFileSync("runuser", ["-u", "postgres", "--", `${PG_BIN}/${command}`, ...args], {
    stdio: "ignore",
    timeout: 120_000,
  });

/**
 * A PostgreSQL 15 cluster the dynamic secret leases real roles on (password login over TCP). Returns
 * its superuser URL and a stop function.
 */
export const startPostgresTarget = async () => {
  ensureDebianPackage(`${PG_BIN}/initdb`, ["postgresql-15"]);
  const uid = Number(execFileSync("id", ["-u", "postgres"]).toString().trim());
  const gid = Number(execFileSync("id", ["-g", "postgres"]).toString().trim());
  const dir = mkdtempSync(join(tmpdir(), "keyward-web-pg-"));
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
  asPostgres("pg_ctl", ["-D", data, "-o", options, "-l", join(dir, "log"), "-w", "start"]);
  return {
    host: "127.0.0.1",
    port,
    password,
    stop: () => {
      try {
        asPostgres("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
};

/** A fresh database on the DATABASE_URL server for this run, or undefined for embedded PGlite. */
export const freshDatabaseUrl = async (adminUrl: string | undefined) => {
  if (!adminUrl) return undefined;
  const name = `keyward_web_${process.pid}_${randomBytes(4).toString("hex")}`;
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(`create database ${name}`);
  } finally {
    await client.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
};
