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
