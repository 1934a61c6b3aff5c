import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { createKeywardClient } from "@keyward/client";
import { openDatabase, type Database } from "../../src/db/database";
import { freePort, waitFor } from "../services/debian";

const SERVER_DIR = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

/** Where a spawned server keeps its data: a PostgreSQL database, or an embedded PGlite directory. */
export type Storage = { databaseUrl?: string; dataDir: string; encryptionKey: string };

export type ServerProcess = {
  child: ChildProcess;
  baseUrl: string;
  startedAt: number;
  exited: Promise<unknown>;
  client: (token?: string) => ReturnType<typeof createKeywardClient>;
};

/**
 * The real server (src/main.ts under tsx) as a child process, as an operator runs it. One process:
 * `node --import tsx`, so SIGKILL (or a failpoint) takes the whole server down at once.
 */
export const spawnServer = async (storage: Storage, extraEnv: Record<string, string> = {}): Promise<ServerProcess> => {
  const port = await freePort();
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "",
    HOME: process.env.HOME ?? "",
    PORT: String(port),
    HOST: "127.0.0.1",
    DATA_DIR: storage.dataDir,
    ENCRYPTION_KEY: storage.encryptionKey,
    LOG_LEVEL: "error",
    ALLOW_PRIVATE_OUTBOUND: "loopback",
    LEASE_REVOCATION_INTERVAL_MS: "500",
    // One process, so SIGKILL (or a failpoint) takes the whole server down; tests of the cluster say otherwise.
    WORKERS: "1",
    ...(storage.databaseUrl ? { DATABASE_URL: storage.databaseUrl } : {}),
    ...extraEnv,
  };
  const startedAt = Date.now();
  const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
    cwd: SERVER_DIR,
    env,
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4_000)));
  const exited = once(child, "exit");
  const baseUrl = `http://127.0.0.1:${port}`;
  await waitFor(
    "the spawned server",
    async () => {
      if (child.exitCode !== null) throw new Error(`server exited early: ${stderr}`);
      return (await fetch(`${baseUrl}/api/status`)).ok;
    },
    60_000,
  ).catch((error: unknown) => {
    child.kill("SIGKILL");
    throw new Error(`${(error as Error).message}; stderr: ${stderr}`);
  });
  return { child, baseUrl, startedAt, exited, client: (token) => createKeywardClient({ baseUrl, token }) };
};

export const killServer = async (server: ServerProcess) => {
  if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill("SIGKILL");
  await server.exited;
};

/** Open the server's database from the test while no server runs (PGlite allows one process at a time). */
export const withDatabase = async <T>(storage: Storage, work: (db: Database) => Promise<T>) => {
  const handle = await openDatabase({ databaseUrl: storage.databaseUrl, dataDir: storage.dataDir });
  try {
    return await work(handle.db);
  } finally {
    await handle.close();
  }
};
