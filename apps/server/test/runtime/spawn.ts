import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { once } from "node:events";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { createKeywardClient } from "@keyward/client";
import { listensOn } from "@keyward/test-services";
import { freePort, waitFor } from "../services/debian";
import { seededPgliteDir } from "../helpers/database";

const SERVER_DIR = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

export type Spawned = {
  child: ChildProcess;
  baseUrl: string;
  port: number;
  /** When the process was started (Date.now()). */
  startedAt: number;
  exited: Promise<[number | null, NodeJS.Signals | null]>;
  /** Every log line the server wrote so far (JSON lines on stdout). */
  logs: () => string[];
  /** The last 4,000 characters the server (and its workers) wrote to stderr. */
  stderr: () => string;
  client: (token?: string) => ReturnType<typeof createKeywardClient>;
  /** The instance admin token (the server is bootstrapped once it answers) and its organization. */
  rootToken: string;
  orgId: string;
};

/** The built server of this run (test/services/server-bundle.ts), as `node apps/server/dist/main.js` runs. */
const serverMain = () => {
  const main = process.env.KEYWARD_TEST_SERVER_MAIN;
  if (!main) throw new Error("KEYWARD_TEST_SERVER_MAIN is not set: the global setup builds the server");
  return main;
};

/**
 * The server as an operator runs it (the built bundle), with its log captured, bootstrapped (unless
 * `bootstrap` is false: another instance on the same database already was; its token is then "").
 * With `wait` false it returns as soon as the process is started (not bootstrapped): for a server
 * that cannot serve yet. `port`: a fixed one (a restart where clients expect the same address).
 */
export const spawnKeyward = async (
  env: Record<string, string>,
  { bootstrap = true, wait = true, port: fixedPort }: { bootstrap?: boolean; wait?: boolean; port?: number } = {},
): Promise<Spawned> => {
  const port = fixedPort ?? (await freePort());
  const startedAt = Date.now();
  const child = spawn(process.execPath, [serverMain()], {
    cwd: SERVER_DIR,
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "",
      PORT: String(port),
      HOST: "127.0.0.1",
      // A new embedded database starts as a copy of the migrated template (test/helpers/database.ts).
      DATA_DIR:
        (env.DATABASE_URL || env.DATA_DIR ? undefined : seededPgliteDir()) ??
        mkdtempSync(join(tmpdir(), "keyward-runtime-")),
      // Instances of one PostgreSQL database share its seal, as an operator configures them.
      ENCRYPTION_KEY: env.DATABASE_URL
        ? createHash("sha256").update(env.DATABASE_URL).digest("base64")
        : randomBytes(32).toString("base64"),
      LOG_LEVEL: "warn",
      PGLITE_SHARED_BUFFERS: "16MB",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines: string[] = [];
  let partial = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    const text = partial + chunk.toString();
    const parts = text.split("\n");
    partial = parts.pop() ?? "";
    lines.push(...parts.filter(Boolean));
  });
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4_000)));
  const exited = once(child, "exit") as Promise<[number | null, NodeJS.Signals | null]>;
  const baseUrl = `http://127.0.0.1:${port}`;
  const client = (token?: string) => createKeywardClient({ baseUrl, token });
  const spawned = { child, baseUrl, port, startedAt, exited, logs: () => [...lines], stderr: () => stderr, client };
  if (!wait) return { ...spawned, rootToken: "", orgId: "" };
  await waitFor(
    "the spawned server",
    async () => {
      if (child.exitCode !== null) throw new Error(`server exited early: ${stderr}`);
      return (await fetch(`${baseUrl}/api/status`)).ok && listensOn(child.pid!, port);
    },
    60_000,
  ).catch((error: unknown) => {
    child.kill("SIGKILL");
    // Where start-up stood: its last log lines (a wait on the database is logged as a warning).
    const lastLogs = lines.slice(-20).join("\n");
    throw new Error(`${(error as Error).message}; stderr: ${stderr}; last log lines:\n${lastLogs}`);
  });
  if (!bootstrap) return { ...spawned, rootToken: "", orgId: "" };
  const boot = await client().system.bootstrap({
    body: { email: "admin@keyward.test", password: "bootstrap-password", organization: "Root" },
  });
  if (boot.status !== 200) throw new Error(`bootstrap failed: ${JSON.stringify(boot.body)}`);
  return { ...spawned, rootToken: boot.body.identity.credentials.token, orgId: boot.body.organization.id };
};

export const stopKeyward = async (server: Spawned) => {
  if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill("SIGKILL");
  await server.exited;
};

/** The pids of a cluster primary's workers. */
export const workerPids = (server: Spawned) =>
  execFileSync("ps", ["--ppid", String(server.child.pid), "-o", "pid=,comm="])
    .toString()
    .trim()
    .split("\n")
    .map((line) => line.trim().split(/\s+/))
    .filter(([, command]) => command === "node")
    .map(([pid]) => Number(pid));
