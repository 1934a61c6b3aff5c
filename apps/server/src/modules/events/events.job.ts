import pg from "pg";
import type { AppJob } from "../../context";
import { loop } from "../../lib/loop";
import { EVENTS_CHANNEL, deleteEventsBefore } from "./secret-events.repository";

const RECONNECT_MAX_MS = 10_000;

/**
 * On PostgreSQL, one connection per process LISTENs for other instances' commits and wakes the
 * feeds of the projects named. When it is lost it reconnects (with a capped backoff) and every feed
 * reads the log once, so nothing committed meanwhile is missed.
 */
const listen = (
  databaseUrl: string,
  onProject: (projectId: string) => void,
  onReconnect: () => void,
  log: (error: unknown) => void,
) => {
  let stopped = false;
  let client: pg.Client | undefined;
  let timer: NodeJS.Timeout | undefined;
  let backoff = 250;
  const connect = async () => {
    if (stopped) return;
    const next = new pg.Client({ connectionString: databaseUrl });
    next.on("notification", (message) => {
      if (message.channel === EVENTS_CHANNEL && message.payload) onProject(message.payload);
    });
    next.on("error", (error) => {
      log(error);
      retry(next);
    });
    try {
      await next.connect();
      await next.query(`LISTEN ${EVENTS_CHANNEL}`);
      if (stopped) return void next.end().catch(() => undefined);
      client = next;
      backoff = 250;
      onReconnect();
    } catch (error) {
      log(error);
      retry(next);
    }
  };
  const retry = (failed: pg.Client) => {
    if (client === failed) client = undefined;
    void failed.end().catch(() => undefined);
    if (stopped) return;
    clearTimeout(timer);
    timer = setTimeout(() => void connect(), backoff);
    backoff = Math.min(backoff * 2, RECONNECT_MAX_MS);
  };
  void connect();
  return async () => {
    stopped = true;
    clearTimeout(timer);
    await client?.end().catch(() => undefined);
  };
};

/**
 * The events stream's background work: following other instances' commits (PostgreSQL), pruning
 * events past the replay window, and, at shutdown, ending every stream so its client reconnects
 * to another instance with its Last-Event-ID.
 */
export const eventsJob: AppJob = {
  name: "events",
  start: (deps) => {
    const stopListening = deps.env.DATABASE_URL
      ? listen(
          deps.env.DATABASE_URL,
          (projectId) => deps.eventHub.wake(deps, projectId),
          () => deps.eventHub.wakeAll(deps),
          (error) => deps.logger.warn({ err: error }, "events stream: the NOTIFY connection failed"),
        )
      : async () => undefined;
    const stopPruning = loop(
      Math.min(60_000, deps.env.EVENTS_REPLAY_WINDOW_S * 250),
      () => deleteEventsBefore(deps.db, new Date(deps.clock.now() - deps.env.EVENTS_REPLAY_WINDOW_S * 1_000)),
      (error) => {
        deps.metrics.jobFailures.inc({ job: "events" });
        deps.logger.error({ err: error }, "events log pruning failed");
      },
    );
    return async () => {
      deps.eventHub.endAll("The server is shutting down: reconnect with your Last-Event-ID.");
      await Promise.all([stopListening(), stopPruning()]);
    };
  },
};
