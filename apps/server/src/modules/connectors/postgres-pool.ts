import { createHash } from "node:crypto";
import pg from "pg";
import type { BoundedCache } from "../../lib/bounded-cache";
import { scrubError } from "./credentials";
import { postgresConfig, postgresLabel, type PostgresTarget } from "./postgres";
import { DEADLINE_MS, vetHost, withDeadline, type Reach } from "./rules";

/** A pool of connections to a target, closed when evicted. */
export type TargetPool = { end: () => Promise<void> };

/**
 * Connections to a target pooled per set of credentials (in `pools`): a fresh login per call costs a
 * TCP handshake and a SCRAM exchange, which dominated lease throughput. Idle connections close after
 * 30 s; a changed password simply starts a new pool.
 */
const poolFor = async (reach: Reach, pools: BoundedCache<TargetPool>, target: PostgresTarget) => {
  const host = await vetHost(target.host, reach.outbound);
  const key = createHash("sha256")
    .update(
      JSON.stringify([
        "pg",
        host.address,
        target.port,
        target.database,
        target.username,
        target.password,
        target.tls?.ca ?? "",
        target.tls?.rejectUnauthorized ?? "plain",
      ]),
    )
    .digest("hex");
  const known = pools.get(key);
  if (known) return known as pg.Pool;
  const pool = new pg.Pool({
    ...postgresConfig(target, host),
    max: 8,
    idleTimeoutMillis: 30_000,
    allowExitOnIdle: true,
  });
  // Idle connections' failures reach the pool; a lent connection's reach only its client (its statement fails too).
  pool.on("error", () => undefined);
  pool.on("connect", (client) => client.on("error", () => undefined));
  pools.set(key, pool);
  return pool;
};

/**
 * Run `work` on a pooled connection within the deadline (name resolution included). A connection
 * that failed, timed out or ran statements that may have changed its session (`resetAfter`) is not
 * handed to the next caller as is.
 */
export const withPooledPostgres = async <T>(
  reach: Reach & { pools: BoundedCache<TargetPool> },
  target: PostgresTarget,
  work: (client: pg.PoolClient) => Promise<T>,
  options: { resetAfter?: boolean } = {},
): Promise<T> => {
  let client: pg.PoolClient | undefined;
  let abandoned = false;
  let released = false;
  const release = (destroy: boolean) => {
    if (!client || released) return;
    released = true;
    client.release(destroy);
  };
  const run = async () => {
    const pool = await poolFor(reach, reach.pools, target);
    const connected = await pool.connect();
    if (abandoned) {
      connected.release(true);
      throw new Error("abandoned");
    }
    client = connected;
    const result = await work(connected);
    if (options.resetAfter) await connected.query("DISCARD ALL");
    return result;
  };
  try {
    const result = await withDeadline(
      reach.deadlineMs ?? DEADLINE_MS,
      postgresLabel(target),
      () => {
        abandoned = true;
        release(true);
      },
      run(),
    );
    release(false);
    return result;
  } catch (error) {
    release(true);
    throw scrubError(error, [target.password, ...(reach.secrets ?? [])]);
  }
};
