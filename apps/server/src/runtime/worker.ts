import cluster from "node:cluster";
import { Server } from "node:net";
import { AggregatorRegistry } from "prom-client";
import { setTimeout as sleep } from "node:timers/promises";
import { createApp } from "../app/create-app";
import { buildDeps } from "../app/deps";
import { migrateWhenReachable } from "../db/database";
import { createLogger } from "../lib/logger";
import type { Env } from "../env";
import { createHttpServer } from "../app/server";
import { startJobs } from "../app/jobs";
import { startMetricsServer } from "../app/metrics-server";
import { announceServing, serverUrl } from "./announce";
import { tuneV8 } from "./v8-tuning";
import { ensurePortFree, exitCannotListen } from "./port";
import { exportServing } from "../modules/backup/backup-export";
import { startControlSocket } from "./control-socket";
import { keywardVersion } from "./version";
import { receiveKeyring } from "./root-keys-message";

const IDLE_GRACE_MS = 1_000;

/**
 * One serving process: the whole server when WORKERS is 1, else one cluster worker. Only the whole
 * server migrates (on PostgreSQL waiting for a database it cannot reach yet, as the cluster primary
 * does); a cluster worker never does, needs no database to start, and answers 503 (not ready) until
 * the database is back. On SIGTERM it turns unready, answers with `Connection: close`, closes idle
 * sockets, lets in-flight requests finish (up to SHUTDOWN_TIMEOUT_MS), and only then stops its
 * jobs and closes the database.
 */
export const runServer = async (env: Env) => {
  tuneV8();
  // A port in use is said in one line before migrating (a cluster worker's primary checked it).
  if (cluster.isPrimary) await ensurePortFree(env.HOST, env.PORT);
  if (cluster.isPrimary && env.DATABASE_URL) {
    await migrateWhenReachable({
      databaseUrl: env.DATABASE_URL,
      connectTimeoutMs: env.DB_CONNECT_TIMEOUT_MS,
      retryMaxMs: env.DB_START_RETRY_MAX_MS,
      logger: createLogger(env.LOG_LEVEL),
    });
  }
  // PGlite is migrated in place, by the one process that opens it.
  const { deps, handle } = await buildDeps(env, { migrate: !env.DATABASE_URL, keyring: await receiveKeyring() });
  const server = createHttpServer(createApp(deps), env);
  const stopJobs = startJobs(deps);
  // An embedded database is locked by this process: backups of it are asked for on its control socket.
  const control =
    handle.kind === "pglite" && !env.DATA_DIR.startsWith("memory://")
      ? startControlSocket(env.DATA_DIR, {
          logger: deps.logger,
          backup: (out) =>
            exportServing(deps.db, { kind: "pglite", keyward: keywardVersion(), secretBox: deps.secretBox }, out),
        })
      : undefined;
  // In a cluster the primary collects this registry over IPC and serves the sum.
  if (cluster.isWorker) {
    AggregatorRegistry.setRegistries([deps.metrics.registry]);
    // Constructing one is what makes prom-client answer the primary's metric requests in a worker.
    new AggregatorRegistry();
  }
  const metricsServer =
    env.METRICS_PORT !== undefined && cluster.isPrimary
      ? startMetricsServer(env.METRICS_PORT, env.METRICS_HOST, deps.logger, async () => ({
          contentType: deps.metrics.registry.contentType,
          body: await deps.metrics.registry.metrics(),
        }))
      : undefined;

  // Taken between the check and now (or refused to a worker): the same one line, not a stack trace.
  server.once("error", (error: NodeJS.ErrnoException) => {
    if (!server.listening) exitCannotListen(env.HOST, env.PORT, error);
  });
  server.listen(env.PORT, env.HOST, () => {
    const address = server.address();
    const port = typeof address === "object" && address ? address.port : env.PORT;
    const fields = { port, host: env.HOST, database: deps.dbKind, pid: process.pid };
    // In a cluster the primary says it once for all workers.
    if (cluster.isWorker) deps.logger.info(fields, "keyward listening");
    else void announceServing(deps.logger, deps.db, serverUrl(env.HOST, port), fields);
  });

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    deps.lifecycle.drain();
    deps.logger.info({ signal, inFlight: deps.lifecycle.inFlight() }, "shutting down: finishing in-flight requests");
    const jobsStopped = stopJobs();
    metricsServer?.close();
    const force = setTimeout(() => {
      deps.logger.warn({ inFlight: deps.lifecycle.inFlight() }, "shutdown timeout: closing remaining connections");
      server.closeAllConnections();
    }, env.SHUTDOWN_TIMEOUT_MS);
    // Stop accepting at once, but without node's http close(), which also closes idle keep-alive
    // sockets at once: a request already on its way over one would be cut. It gets its answer (with
    // Connection: close) during a short grace; then idle sockets are closed, and a busy one closes
    // after its response.
    const closed = new Promise<void>((resolve) => Server.prototype.close.call(server, () => resolve()));
    await sleep(Math.min(IDLE_GRACE_MS, env.SHUTDOWN_TIMEOUT_MS));
    server.closeIdleConnections();
    const sweep = setInterval(() => server.closeIdleConnections(), IDLE_GRACE_MS / 2);
    await closed;
    clearInterval(sweep);
    clearTimeout(force);
    // A handler whose socket was cut may still be running its queries: a moment for it to end.
    await Promise.race([deps.lifecycle.idle(), sleep(1_000)]);
    await jobsStopped;
    await control?.close();
    deps.targetPools.clear();
    await handle.close();
    deps.logger.info("stopped");
    process.exit(0);
  };
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  process.on("SIGINT", () => void shutdown("SIGINT"));
};
