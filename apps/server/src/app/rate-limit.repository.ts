import { sql } from "kysely";
import type { Database } from "../db/database";

/** One hit on a (key, window) counter: the window's count after it. */
export const incrementRateLimitCounter = (db: Database, key: string, windowStart: Date) =>
  sql<{ hits: number }>`
    insert into rate_limit_counters (key, window_start, hits) values (${key}, ${windowStart}, 1)
    on conflict (key, window_start) do update set hits = rate_limit_counters.hits + 1
    returning hits`
    .execute(db)
    .then(({ rows }) => rows[0]?.hits ?? 0);

/** Counters of windows that started before `before` are deleted. */
export const deleteRateLimitCountersBefore = (db: Database, before: Date) =>
  db.deleteFrom("rate_limit_counters").where("window_start", "<", before).execute();
