import { spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../../../", import.meta.url));
const { packageManager } = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { packageManager: string };

/** `start` exactly as the README runs it, in the repository root, with the caller's environment. */
const start = (env: Record<string, string>) => {
  // The server under test runs on its own PGlite, whatever database the suite itself uses.
  const { DATABASE_URL: _suiteDatabase, ...inherited } = process.env;
  const child = spawn("npx", ["-y", packageManager, "start"], {
    cwd: root,
    env: { ...inherited, LOG_LEVEL: "info", ...env },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const waitFor = async (pattern: RegExp, ms = 150_000) => {
    const deadline = Date.now() + ms;
    while (!pattern.test(output)) {
      if (child.exitCode !== null) throw new Error(`start exited with ${child.exitCode}:\n${output}`);
      if (Date.now() > deadline) throw new Error(`no ${pattern} within ${ms} ms:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };
  const stop = async () => {
    if (child.exitCode !== null) return;
    process.kill(-child.pid!, "SIGTERM");
    await once(child, "exit");
  };
  return { child, output: () => output, waitFor, stop };
};

const dataDirs: string[] = [];
afterAll(() => dataDirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

// A first start builds the server and the console.
describe("the start command", { timeout: 180_000 }, () => {
  it("passes the whole environment to the server, keeps a relative DATA_DIR where start runs, and says how to set up", async () => {
    const dataDir = `.keyward-start-test-${randomBytes(4).toString("hex")}`;
    dataDirs.push(join(root, dataDir));
    // Port 0: the server takes one the OS picks and names it (a port picked free here could be taken
    // by another test's server before this one binds it).
    const server = start({
      PORT: "0",
      HOST: "127.0.0.1",
      DATA_DIR: `./${dataDir}`,
      ENCRYPTION_KEY: randomBytes(32).toString("base64"),
      HTTP_KEEP_ALIVE_TIMEOUT_MS: "7000",
      WORKERS: "1",
    });
    try {
      await server.waitFor(/keyward is not set up yet/);
      const url = /keyward serving (http:\/\/127\.0\.0\.1:[1-9]\d*)/.exec(server.output())?.[1];
      expect(url, server.output()).toBeDefined();
      expect(server.output()).toContain(`POST ${url}/api/v1/admin/bootstrap`);
      const status = await fetch(`${url}/api/status`);
      expect(status.headers.get("keep-alive")).toBe("timeout=7");
      expect(existsSync(join(root, dataDir))).toBe(true);
      const config = (await (await fetch(`${url}/api/v1/admin/config`)).json()) as { config: { initialized: boolean } };
      expect(config).toEqual({ config: { initialized: false } });
    } finally {
      await server.stop();
    }
  });

  it("a variable turbo used to drop reaches the server: a missing OUTBOUND_EXTRA_CA_FILE stops it, naming the file", async () => {
    const dataDir = `.keyward-start-test-${randomBytes(4).toString("hex")}`;
    dataDirs.push(join(root, dataDir));
    const missing = `/nonexistent/keyward-ca-${randomBytes(4).toString("hex")}.pem`;
    const server = start({ PORT: "0", DATA_DIR: `./${dataDir}`, OUTBOUND_EXTRA_CA_FILE: missing });
    const [code] = (await once(server.child, "exit")) as [number | null];
    expect(code).not.toBe(0);
    expect(server.output()).toContain(missing);
  });
});
