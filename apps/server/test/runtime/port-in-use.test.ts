import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { freePort } from "../services/debian";
import { spawnKeyward } from "./spawn";

const taken: Server[] = [];
const dirs: string[] = [];
afterAll(() => {
  for (const server of taken) server.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A port some other program holds. */
const takePort = async () => {
  const port = await freePort();
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  taken.push(server);
  return port;
};

/** Nothing listens here: a server that tried to migrate it would wait for it, not exit. */
const UNREACHABLE = "postgres://keyward:keyward@127.0.0.1:9/keyward";

const startOn = async (env: Record<string, string>) => {
  const dataDir = mkdtempSync(join(tmpdir(), "keyward-port-"));
  dirs.push(dataDir);
  const server = await spawnKeyward({ LOG_LEVEL: "info", DATA_DIR: dataDir, ...env }, { wait: false });
  const [code] = await server.exited;
  return { code, stderr: server.stderr().trim(), logs: server.logs(), dataDir };
};

describe("a start whose port is in use", { timeout: 90_000 }, () => {
  it("on PGlite: one line naming the address, exit 1, before creating the database", async () => {
    const port = await takePort();
    const { code, stderr, logs, dataDir } = await startOn({ PORT: String(port) });
    expect(code).toBe(1);
    expect(stderr).toBe(`Keyward cannot listen on 127.0.0.1:${port}: the port is in use (set PORT to another)`);
    expect(logs.join("\n")).not.toMatch(/migrat|creating the database/);
    expect(existsSync(join(dataDir, "pgdata"))).toBe(false);
    expect(readdirSync(dataDir)).toEqual([]);
  });

  it("on PostgreSQL, one process or a cluster: the line comes before any attempt to migrate", async () => {
    for (const workers of ["1", "2"]) {
      const port = await takePort();
      const { code, stderr, logs } = await startOn({
        PORT: String(port),
        DATABASE_URL: UNREACHABLE,
        WORKERS: workers,
      });
      expect(code, `WORKERS=${workers}`).toBe(1);
      expect(stderr).toBe(`Keyward cannot listen on 127.0.0.1:${port}: the port is in use (set PORT to another)`);
      expect(logs.join("\n")).not.toContain("waiting for the database");
    }
  });
});
