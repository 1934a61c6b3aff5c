import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { ensureDebianPackages, freePort, waitFor } from "./debian";

const BINARY = "/usr/bin/redis-server";

/**
 * Debian's redis-server on a free loopback port, no persistence, the default user behind a
 * password. Published as KEYWARD_TEST_REDIS_URL (redis://default:<password>@127.0.0.1:<port>).
 */
export const startRedis = async () => {
  ensureDebianPackages(BINARY, ["redis-server"]);
  const dir = mkdtempSync(join(tmpdir(), "keyward-redis-"));
  const port = await freePort();
  const password = randomBytes(18).toString("hex");
  const child = spawn(
    BINARY,
    [
      "--port",
      String(port),
      "--bind",
      "127.0.0.1",
      "--dir",
      dir,
      "--save",
      "",
      "--appendonly",
      "no",
      "--requirepass",
      password,
      "--daemonize",
      "no",
    ],
    { stdio: "ignore" },
  );
  const exited = once(child, "exit");
  await waitFor("redis-server", async () => {
    const client = new Redis({
      host: "127.0.0.1",
      port,
      password,
      lazyConnect: true,
      retryStrategy: () => null,
      maxRetriesPerRequest: 0,
    });
    client.on("error", () => undefined);
    try {
      await client.connect();
      return (await client.ping()) === "PONG";
    } finally {
      client.disconnect();
    }
  });
  process.env.KEYWARD_TEST_REDIS_URL = `redis://default:${password}@127.0.0.1:${port}`;
  return async () => {
    child.kill("SIGTERM");
    await exited;
    rmSync(dir, { recursive: true, force: true });
  };
};
