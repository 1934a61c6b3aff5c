import type { PGlite } from "@electric-sql/pglite";
import { randomBytes } from "node:crypto";
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
/** How often the listening connection is checked (its own notice sent and heard), and how long that may take. */
const HEARTBEAT_MS = 5_000;
const HEARTBEAT_TIMEOUT_MS = 3_000;

/**
 * PostgreSQL: one connection of its own LISTENs. It counts as listening once a notice it sends
 * itself on a channel of its own comes back, and every 5 s it checks that again: a connection that
 * fails, drops without a word, or whose notices do not arrive (a pooler that does not keep a
 * session's LISTEN) is closed, `onLost` is called, and it reconnects with a capped backoff.
 */
export const listenPostgres =
  (databaseUrl: string): Listen =>
  (listener) => {
    const probeChannel = `keyward_probe_${randomBytes(8).toString("hex")}`;
    const probes = new Map<string, () => void>();
    /** Sends a notice to this listener alone over `conn`; settles when it came back, or fails. */
    const probe = (conn: pg.Client) =>
      new Promise<void>((resolve, reject) => {
        const nonce = randomBytes(8).toString("hex");
        const settle = (error?: Error) => {
          clearTimeout(timer);
          probes.delete(nonce);
          if (error === undefined) resolve();
          else reject(error);
        };
        const timer = setTimeout(
          () => settle(new Error("the listening connection's own notice did not come back")),
          HEARTBEAT_TIMEOUT_MS,
        );
        probes.set(nonce, () => settle());
        conn
          .query("select pg_notify($1, $2)", [probeChannel, nonce])
          .catch((error: unknown) => settle(error instanceof Error ? error : new Error(String(error))));
      });
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
        if (message.channel === probeChannel) probes.get(message.payload ?? "")?.();
        else if (client === next && listener.channels.includes(message.channel)) {
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
        for (const channel of [...listener.channels, probeChannel]) {
          await next.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
        }
        await probe(next);
        if (stopped) return void next.end().catch(() => undefined);
        client = next;
        backoff = 250;
        heartbeat = setInterval(() => {
          probe(next).catch((error: unknown) => {
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
