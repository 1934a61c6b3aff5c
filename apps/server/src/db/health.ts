import type { Logger } from "../lib/logger";

/**
 * What the process last learnt about its database. Queries report here (through the pool), so an
 * outage is logged once when it starts and once when it ends, never per request, and the status
 * route answers from this state instead of waiting on a database that may not answer.
 */
export type DbHealth = {
  isUp: () => boolean;
  failed: (error: unknown) => void;
  succeeded: () => void;
  /** The handle was closed on purpose (shutdown): not ready, and nothing to log. */
  closed: () => void;
  /** Start a background check when the last one is older than a second; never waits for it. */
  refresh: () => void;
  setProbe: (probe: () => Promise<unknown>) => void;
};

/** Socket errors of a connection that could not be made or was lost. */
const NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EPIPE",
  "ENOTFOUND",
  "EAI_AGAIN",
]);
/**
 * SQLSTATEs of a server that is going away, starting, refusing connections or that cancelled a
 * statement past its timeout: class 08 (connection exception), 57P01-57P03, 53300, 57014.
 */
const UNAVAILABLE_SQLSTATES = new Set(["57P01", "57P02", "57P03", "53300", "57014"]);
/** pg, pg-pool and Kysely say so only in their messages. */
const UNAVAILABLE_MESSAGES =
  /timeout exceeded when trying to connect|Connection terminated|Query read timeout|connection timeout|Client has encountered a connection error|driver has already been destroyed|Cannot use a pool after calling end|database connection is broken/i;

/** True for errors meaning "the database cannot be reached now" (503), not "this request is wrong". */
export const isDatabaseUnavailable = (error: unknown): boolean => {
  if (!error || typeof error !== "object") return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code === "string") {
    if (NETWORK_CODES.has(code) || UNAVAILABLE_SQLSTATES.has(code) || /^08...$/.test(code)) return true;
  }
  return typeof message === "string" && UNAVAILABLE_MESSAGES.test(message);
};

const REFRESH_EVERY_MS = 1_000;

/**
 * `known` false: nothing is known yet (a PostgreSQL handle before its first statement), so the
 * process is not ready until a statement succeeds, and a first failure is logged as an outage.
 */
export const createDbHealth = (logger?: Logger, { known = true } = {}): DbHealth => {
  let up = known;
  let unknown = !known;
  let closed = false;
  let probe: (() => Promise<unknown>) | undefined;
  let checking = false;
  let checkedAt = 0;
  const health: DbHealth = {
    isUp: () => up && !closed,
    failed: (error) => {
      if ((!up && !unknown) || closed) return;
      up = false;
      unknown = false;
      const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
      logger?.error({ code, cause: typeof message === "string" ? message : undefined }, "database unavailable");
    },
    succeeded: () => {
      if (up || closed) return;
      up = true;
      if (!unknown) logger?.info("database available again");
      unknown = false;
    },
    closed: () => {
      closed = true;
    },
    refresh: () => {
      const now = Date.now();
      if (closed || checking || !probe || now - checkedAt < REFRESH_EVERY_MS) return;
      checking = true;
      checkedAt = now;
      // The probe goes through the pool, which reports success or failure here itself.
      void probe()
        .catch(() => undefined)
        .finally(() => (checking = false));
    },
    setProbe: (next) => {
      probe = next;
    },
  };
  return health;
};
