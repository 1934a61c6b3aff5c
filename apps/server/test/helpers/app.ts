import { createHash, randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { type AddressInfo } from "node:net";
import type { Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { inspect } from "node:util";
import { createKeywardClient, type KeywardClient } from "@keyward/client";
import { createApp } from "../../src/app/create-app";
import type { AppDeps } from "../../src/context";
import { buildDeps } from "../../src/app/deps";
import { loadEnv } from "../../src/env";
import { createHttpServer } from "../../src/app/server";
import type { DatabaseHandle } from "../../src/db/database";
import { createTestDatabaseUrl, seededPgliteDir } from "./database";

export type TestApp = {
  deps: AppDeps;
  baseUrl: string;
  server: Server;
  handle: DatabaseHandle;
  /** The bootstrap (instance admin) token of this app's database. */
  rootToken: string;
  /** What the bootstrap call answered. */
  bootstrap: Extract<Awaited<ReturnType<KeywardClient["system"]["bootstrap"]>>, { status: 200 }>["body"];
  client: (token?: string) => KeywardClient;
  close: () => Promise<void>;
};

export type BareTestApp = Omit<TestApp, "rootToken" | "bootstrap">;

/** A database's ENCRYPTION_KEY in tests: derived from its URL (each fresh database has its own), random for PGlite. */
const sealKeyFor = (databaseUrl: string | undefined) =>
  databaseUrl ? createHash("sha256").update(databaseUrl).digest("base64") : randomBytes(32).toString("base64");

/**
 * A 500's cause goes to stderr whatever the log level, so a run that meets one names it: the answer
 * only says "Something went wrong" and the log is silent in tests.
 */
const printUnhandledErrors = (deps: AppDeps) => {
  const error: (...args: unknown[]) => void = deps.logger.error.bind(deps.logger);
  deps.logger.error = (first: unknown, ...rest: unknown[]) => {
    if (rest[0] === "unhandled error" && typeof first === "object" && first !== null) {
      const { err, method, path } = first as { err?: unknown; method?: string; path?: string };
      process.stderr.write(`keyward test app: unhandled error on ${method} ${path}: ${inspect(err)}\n`);
    }
    return error(first, ...rest);
  };
};

/** An app over a database of its own that nobody has set up yet, listening on an ephemeral loopback port. */
export const startBareTestApp = async (overrides: Record<string, string> = {}): Promise<BareTestApp> => {
  const databaseUrl = await createTestDatabaseUrl();
  const dataDir = mkdtempSync(join(tmpdir(), "keyward-test-"));
  const env = loadEnv({
    // KEYWARD_TEST_LOG=error shows the server's log (the cause of a 500) while debugging a test.
    LOG_LEVEL: process.env.KEYWARD_TEST_LOG ?? "silent",
    DATA_DIR: dataDir,
    // Apps of one PostgreSQL database share its seal, as an operator configures its instances.
    ENCRYPTION_KEY: sealKeyFor(overrides.DATABASE_URL ?? databaseUrl),
    ALLOW_PRIVATE_OUTBOUND: "loopback",
    // The test's fetch and the server share one event loop; a loop held up past the client's idle
    // limit (four seconds under the default hint) could let the server close a connection the client
    // is reusing (ECONNRESET). A minute's limit keeps that window out of any test's pauses.
    HTTP_KEEP_ALIVE_TIMEOUT_MS: "60000",
    // A test's database is small; a small buffer pool starts on about 60% of the CPU of the default.
    PGLITE_SHARED_BUFFERS: "16MB",
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    ...overrides,
  });
  // PGlite: a copy of the unpacked template, or (without one) a database in memory from the archive.
  const seeded = env.DATABASE_URL ? undefined : seededPgliteDir();
  const { deps, handle } = await buildDeps(env, {
    dataDir: seeded ?? "memory://",
    pgliteTemplate: process.env.KEYWARD_TEST_PGLITE_TEMPLATE,
  });
  printUnhandledErrors(deps);
  const server = createHttpServer(createApp(deps), env);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    deps,
    baseUrl,
    server,
    handle,
    client: (token?: string) => createKeywardClient({ baseUrl, token }),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await handle.close();
      if (seeded) rmSync(seeded, { recursive: true, force: true });
    },
  };
};

/** An app over a database of its own, bootstrapped, listening on an ephemeral loopback port. */
export const startTestApp = async (overrides: Record<string, string> = {}): Promise<TestApp> => {
  const app = await startBareTestApp(overrides);
  const boot = await app.client().system.bootstrap({
    body: { email: "admin@keyward.test", password: "bootstrap-password", organization: "Root" },
  });
  if (boot.status !== 200) throw new Error(`bootstrap failed: ${JSON.stringify(boot.body)}`);
  return { ...app, rootToken: boot.body.identity.credentials.token, bootstrap: boot.body };
};

let shared: Promise<TestApp> | undefined;

/** One migrated database and app per test worker; tests isolate themselves by tenant. */
export const getTestApp = () => (shared ??= startTestApp());

/** The worker's shared app if a test started it (the no-secret scan looks only then). */
export const startedTestApp = () => shared;
