import cluster, { type Worker } from "node:cluster";
import { migrateWhenReachable, openDatabase } from "../db/database";
import type { Env } from "../env";
import { createLogger } from "../lib/logger";
import { AggregatorRegistry } from "prom-client";
import { startMetricsServer } from "../app/metrics-server";
import { announceServing, serverUrl } from "./announce";
import { ensurePortFree } from "./port";
import { closeSeals, openRootKeys } from "../modules/root-keys/seals";
import type { KeyringSnapshot } from "../crypto/root-keyring";
import { ROOT_KEYS_MESSAGE, ROOT_KEYS_REQUEST } from "./root-keys-message";

/** A worker that dies sooner than this after its start is restarted after a pause, not in a tight loop. */
const QUICK_DEATH_MS = 5_000;
/** The pause after a quick death, doubling with each one in a row (up to the maximum) until a worker listens. */
const RESTART_PAUSE_MS = 1_000;
const RESTART_PAUSE_MAX_MS = 30_000;

/**
 * The cluster primary: the only process that migrates (waiting for a database it cannot reach yet,
 * see `migrateWhenReachable`), then forks `count` workers sharing the port, replaces a worker that
 * dies, and on SIGTERM/SIGINT passes the signal to every worker (each drains itself), killing any
 * still running SHUTDOWN_TIMEOUT_MS (plus a margin for closing its database) later. A worker never
 * migrates: one started while the database is down serves (503) until it is back.
 */
export const runPrimary = async (env: Env & { DATABASE_URL: string }, count: number) => {
  const logger = createLogger(env.LOG_LEVEL);
  // A port in use is said in one line before migrating, not by every worker it forks.
  await ensurePortFree(env.HOST, env.PORT);
  await migrateWhenReachable({
    databaseUrl: env.DATABASE_URL,
    connectTimeoutMs: env.DB_CONNECT_TIMEOUT_MS,
    retryMaxMs: env.DB_START_RETRY_MAX_MS,
    logger,
  });
  // The root keys' seal is opened once here (version 1 created if the database has none): a wrong PIN
  // or a missing key stops the start before any worker forks, instead of every restarted worker trying
  // the PIN again (an HSM locks or wipes its keys after a few wrong ones).
  // Each worker it forks gets the keyring over their IPC channel, so one forked while the database is
  // down starts (and answers 503) without reading it; its root-keys job catches up once it is back.
  const checking = await openDatabase({ databaseUrl: env.DATABASE_URL, poolSize: 1 });
  let keyring: KeyringSnapshot;
  try {
    const opened = await openRootKeys(env, checking.db);
    keyring = opened.keyring.snapshot();
    await closeSeals(opened.seals);
  } finally {
    await checking.close();
  }
  cluster.on("message", (worker: Worker, message: { type?: string }) => {
    if (message?.type === ROOT_KEYS_REQUEST) worker.send({ type: ROOT_KEYS_MESSAGE, keyring });
  });

  let stopping = false;
  const startedAt = new Map<number, number>();
  let listening = 0;
  let quickDeaths = 0;
  const fork = () => {
    if (stopping) return;
    const worker = cluster.fork();
    startedAt.set(worker.id, Date.now());
  };
  cluster.on("listening", (_worker: Worker, address: { port: number }) => {
    quickDeaths = 0;
    listening += 1;
    if (listening !== count) return;
    // The port the workers share: the one asked for, or the one the system picked for PORT=0.
    const port = address.port || env.PORT;
    const url = serverUrl(env.HOST, port);
    void (async () => {
      const announcing = await openDatabase({ databaseUrl: env.DATABASE_URL, poolSize: 1 });
      await announceServing(logger, announcing.db, url, { workers: count, port, host: env.HOST });
      await announcing.close();
    })().catch(() => undefined);
  });
  cluster.on("exit", (worker: Worker, code, signal) => {
    const lived = Date.now() - (startedAt.get(worker.id) ?? 0);
    startedAt.delete(worker.id);
    if (stopping) {
      if (Object.keys(cluster.workers ?? {}).length === 0) {
        logger.info("stopped");
        process.exit(0);
      }
      return;
    }
    logger.error({ pid: worker.process.pid, code, signal }, "worker died; starting another");
    if (lived >= QUICK_DEATH_MS) return fork();
    quickDeaths += 1;
    setTimeout(fork, Math.min(RESTART_PAUSE_MS * 2 ** (quickDeaths - 1), RESTART_PAUSE_MAX_MS));
  });
  for (let i = 0; i < count; i++) fork();
  const aggregator = new AggregatorRegistry();
  const metricsServer =
    env.METRICS_PORT !== undefined
      ? startMetricsServer(env.METRICS_PORT, env.METRICS_HOST, logger, async () => ({
          contentType: aggregator.contentType,
          body: await aggregator.clusterMetrics(),
        }))
      : undefined;

  const shutdown = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, "shutting down workers");
    metricsServer?.close();
    const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined);
    if (workers.length === 0) process.exit(0);
    for (const worker of workers) worker.process.kill(signal);
    setTimeout(() => {
      for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill("SIGKILL");
    }, env.SHUTDOWN_TIMEOUT_MS + 5_000).unref();
  };
  process.on("SIGTERM", () => shutdown("SIGTERM"));
  process.on("SIGINT", () => shutdown("SIGINT"));
};
