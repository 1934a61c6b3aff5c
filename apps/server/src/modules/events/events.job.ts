import type { AppJob } from "../../context";
import { loop } from "../../lib/loop";
import { EVENTS_CHANNEL, deleteEventsBefore } from "./secret-events.repository";

/**
 * The events stream's background work: following other instances' commits (PostgreSQL), pruning
 * events past the replay window, and, at shutdown, ending every stream so its client reconnects
 * to another instance with its Last-Event-ID.
 */
export const eventsJob: AppJob = {
  name: "events",
  start: (deps) => {
    // On PGlite there is one process: a commit wakes its feeds directly.
    const stopListening =
      deps.dbKind === "postgres"
        ? deps.listen({
            channels: [EVENTS_CHANNEL],
            onNotice: (_channel, projectId) => {
              if (projectId) deps.eventHub.wake(deps, projectId);
            },
            // Whatever was committed while not listening is read from the log once.
            onListening: () => deps.eventHub.wakeAll(deps),
            onLost: () => undefined,
            log: (error) => deps.logger.warn({ err: error }, "events stream: the NOTIFY connection failed"),
          })
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
