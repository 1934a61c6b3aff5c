import type { AppDeps } from "../../context";
import { findEventHead, listEventsAfter, type EventRow } from "./secret-events.repository";

/** What a stream needs from the hub: each event after its last one, in order, then it decides what to send. */
export type Subscriber = {
  projectId: string;
  /** Who holds the stream (for the per-caller bound). */
  actorKey: string;
  /** The last event number this stream has dealt with (sent or filtered out). */
  lastSeq: number;
  /** Hand one event over; the stream filters it and writes a frame. */
  deliver: (event: EventRow) => void;
  /** End the stream (shutdown, or a read of the log that failed). */
  end: (reason: string) => void;
};

type Feed = {
  /** The last event number read from the log and handed to the subscribers. */
  cursor: number;
  subscribers: Set<Subscriber>;
  reading: boolean;
  /** A wake-up came during a read: read again when it is done. */
  again: boolean;
};

/** Events read from the log per statement. */
const READ_BATCH = 500;

/**
 * The events streams of one serving process. Each project with a subscriber has one feed: woken
 * when the project has new events (by this instance's commits, or another's through PostgreSQL
 * NOTIFY), it reads them from the log once and hands each to its subscribers, whatever their number.
 */
export const createEventHub = () => {
  const feeds = new Map<string, Feed>();
  const watchers = new Set<(projectId: string) => void>();
  const byActor = new Map<string, number>();
  let total = 0;

  const read = async (deps: AppDeps, projectId: string, feed: Feed) => {
    if (feed.reading) {
      feed.again = true;
      return;
    }
    feed.reading = true;
    try {
      do {
        feed.again = false;
        for (;;) {
          const rows = await listEventsAfter(deps.db, projectId, feed.cursor, READ_BATCH);
          for (const row of rows) {
            feed.cursor = row.seq;
            for (const subscriber of feed.subscribers) if (row.seq > subscriber.lastSeq) subscriber.deliver(row);
          }
          if (rows.length < READ_BATCH) break;
        }
      } while (feed.again && feeds.get(projectId) === feed);
    } catch (error) {
      deps.logger.warn({ err: error, projectId }, "events stream: reading the event log failed");
      // Every subscriber reconnects and catches up from its Last-Event-ID.
      for (const subscriber of feed.subscribers) subscriber.end("The event log could not be read");
    } finally {
      feed.reading = false;
    }
  };

  return {
    /** A project has events up to `seq` (or some new events): its feed reads them. */
    wake(deps: AppDeps, projectId: string, seq?: number) {
      for (const watcher of watchers) watcher(projectId);
      const feed = feeds.get(projectId);
      if (!feed || (seq !== undefined && seq <= feed.cursor)) return;
      void read(deps, projectId, feed);
    },
    /**
     * Be told of every project with new events (this instance's commits and, on PostgreSQL, every
     * other's), whether or not a stream follows it; answers the function that stops it.
     */
    watch(watcher: (projectId: string) => void) {
      watchers.add(watcher);
      return () => void watchers.delete(watcher);
    },
    /** Every feed looks for events it may have missed (after the NOTIFY connection was lost). */
    wakeAll(deps: AppDeps) {
      for (const [projectId, feed] of feeds) void read(deps, projectId, feed);
    },
    /** Whether one more stream of this caller fits the bounds: undefined when it does, else the reason. */
    refusal(deps: AppDeps, actorKey: string): string | undefined {
      if (total >= deps.env.EVENTS_MAX_STREAMS)
        return "This server holds as many event streams as it may. Try again later.";
      if ((byActor.get(actorKey) ?? 0) >= deps.env.EVENTS_MAX_STREAMS_PER_ACTOR)
        return "Too many active event streams for this caller. Please close some before opening a new one.";
      return undefined;
    },
    /**
     * Add a subscriber; returns the project's feed position when it joined. Events after it reach
     * the subscriber once its `lastSeq` is at most their number.
     */
    async add(deps: AppDeps, subscriber: Subscriber) {
      total += 1;
      byActor.set(subscriber.actorKey, (byActor.get(subscriber.actorKey) ?? 0) + 1);
      let feed = feeds.get(subscriber.projectId);
      if (!feed) {
        const head = await findEventHead(deps.db, subscriber.projectId).catch((error: unknown) => {
          total -= 1;
          byActor.set(subscriber.actorKey, (byActor.get(subscriber.actorKey) ?? 1) - 1);
          throw error;
        });
        feed = feeds.get(subscriber.projectId) ?? {
          cursor: head,
          subscribers: new Set(),
          reading: false,
          again: false,
        };
        feeds.set(subscriber.projectId, feed);
        // An event committed while the head was being read woke no feed: look once more.
        void read(deps, subscriber.projectId, feed);
      }
      feed.subscribers.add(subscriber);
      return feed.cursor;
    },
    remove(subscriber: Subscriber) {
      const feed = feeds.get(subscriber.projectId);
      if (!feed?.subscribers.delete(subscriber)) return;
      total -= 1;
      const left = (byActor.get(subscriber.actorKey) ?? 1) - 1;
      if (left > 0) byActor.set(subscriber.actorKey, left);
      else byActor.delete(subscriber.actorKey);
      if (feed.subscribers.size === 0) feeds.delete(subscriber.projectId);
    },
    /** Streams open on this process. */
    count: () => total,
    /** Shutdown: every stream ends, and its client reconnects elsewhere with its Last-Event-ID. */
    endAll(reason: string) {
      for (const feed of [...feeds.values()]) for (const subscriber of [...feed.subscribers]) subscriber.end(reason);
    },
  };
};

export type EventHub = ReturnType<typeof createEventHub>;
