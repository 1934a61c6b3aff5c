import { execFileSync } from "node:child_process";
import { PG15_BIN } from "@keyward/test-services";

/** Whether a user and password log in to the target (through Debian's psql, so the test needs no driver). */
export const canLogin = (targetUrl: string, user: string, password: string) => {
  const { hostname, port } = new URL(targetUrl);
  try {
    execFileSync(
      `${PG15_BIN}/psql`,
      ["-h", hostname, "-p", port, "-U", user, "-d", "postgres", "-tAc", "select 1", "-w"],
      { env: { PATH: process.env.PATH, PGPASSWORD: password, PGCONNECT_TIMEOUT: "5" }, stdio: "pipe" },
    );
    return true;
  } catch {
    return false;
  }
};

/** A `sql-database` dynamic-secret provider on the target, logging in as the target's own user. */
export const postgresProvider = (target: URL) => ({
  type: "sql-database" as const,
  inputs: {
    client: "postgres" as const,
    host: target.hostname,
    port: Number(target.port),
    database: "postgres",
    username: decodeURIComponent(target.username),
    password: decodeURIComponent(target.password),
  },
});
