import type { PGlite } from "@electric-sql/pglite";
import pg from "pg";
import type { Database } from "./database";

/**
 * What a listener hears: the database's notices on its channels, and when it starts and stops
 * hearing them. Between `onLost` and the next `onListening` notices may be missed, so whatever a
 * listener keeps on the strength of them is dropped on both.
 */
export type Listener = {
  channels: readonly string[];
  onNotice: (channel: string, payload: string) => void;
  /** Listening (again): every notice committed from now on arrives. */
  onListening: () => void;
  /** No longer listening: notices may be missed until the next `onListening`. */
  onLost: () => void;
  log: (error: unknown) => void;
};

/** Start listening; the function returned stops it (after which no handler is called). */
export type Listen = (listener: Listener) => () => Promise<void>;

const RECONNECT_MAX_MS = 10_000;
/** How often the listening connection is checked, and how long the check may take. */
const HEARTBEAT_MS = 5_000;
const HEARTBEAT_TIMEOUT_MS = 3_000;

/**
 * PostgreSQL: one connection of its own LISTENs. When it fails, or a heartbeat query goes
 * unanswered (a connection dropped without a word), it is closed, `onLost` is called, and it
 * reconnects with a capped backoff.
 */
export const listenPostgres =
  (databaseUrl: string): Listen =>
  (listener) => {
    let stopped = false;
    let client: pg.Client | undefined;
    let reconnect: NodeJS.Timeout | undefined;
    let heartbeat: NodeJS.Timeout | undefined;
    let backoff = 250;
    const connect = async () => {
      if (stopped) return;
      const next = new pg.Client({
        connectionString: databaseUrl,
        keepAlive: true,
        connectionTimeoutMillis: HEARTBEAT_TIMEOUT_MS,
        query_timeout: HEARTBEAT_TIMEOUT_MS,
        application_name: "keyward-listen",
      });
      next.on("notification", (message) => {
        if (client === next && listener.channels.includes(message.channel)) {
          listener.onNotice(message.channel, message.payload ?? "");
        }
      });
      next.on("error", (error) => {
        listener.log(error);
        lose(next);
      });
      next.on("end", () => lose(next));
      try {
        await next.connect();
        for (const channel of listener.channels) await next.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
        if (stopped) return void next.end().catch(() => undefined);
        client = next;
        backoff = 250;
        heartbeat = setInterval(() => {
          next.query("select 1").catch((error: unknown) => {
            listener.log(error);
            lose(next);
          });
        }, HEARTBEAT_MS);
        heartbeat.unref();
        listener.onListening();
      } catch (error) {
        listener.log(error);
        lose(next);
      }
    };
    const lost = new WeakSet<pg.Client>();
    const lose = (failed: pg.Client) => {
      if (lost.has(failed)) return;
      lost.add(failed);
      void failed.end().catch(() => undefined);
      const wasListening = client === failed;
      if (wasListening) {
        client = undefined;
        clearInterval(heartbeat);
      }
      if (stopped) return;
      if (wasListening) listener.onLost();
      else if (client !== undefined) return;
      clearTimeout(reconnect);
      reconnect = setTimeout(() => void connect(), backoff);
      backoff = Math.min(backoff * 2, RECONNECT_MAX_MS);
    };
    void connect();
    return async () => {
      stopped = true;
      clearTimeout(reconnect);
      clearInterval(heartbeat);
      const last = client;
      client = undefined;
      if (last) lost.add(last);
      await last?.end().catch(() => undefined);
    };
  };

/**
 * PGlite: the one in-process connection listens, its notices delivered as the statement that
 * commits them settles. LISTEN and UNLISTEN are sent while holding the connection, so neither lands
 * inside another caller's transaction.
 */
export const listenPglite =
  (client: PGlite, db: Database): Listen =>
  (listener) => {
    let stopped = false;
    const unlistens: Promise<(() => Promise<void>) | undefined> = db
      .connection()
      .execute(async () => {
        const done: (() => Promise<void>)[] = [];
        for (const channel of listener.channels) {
          done.push(
            await client.listen(channel, (payload) => {
              if (!stopped) listener.onNotice(channel, payload);
            }),
          );
        }
        if (!stopped) listener.onListening();
        return async () => {
          for (const unlisten of done) await unlisten();
        };
      })
      .catch((error: unknown) => {
        listener.log(error);
        return undefined;
      });
    return async () => {
      stopped = true;
      const unlisten = await unlistens;
      if (unlisten)
        await db
          .connection()
          .execute(unlisten)
          .catch(() => undefined);
    };
  };
