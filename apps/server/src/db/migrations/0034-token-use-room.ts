import type { Kysely } from "kysely";
import { runStatements } from "./run-sql";

/**
 * Room on each page of `identity_access_tokens` for the token-use job's writes. A token's last-used
 * time is written at most every 10 s per token; with tokens spread over many identities that is a
 * row update per request. No index covers `last_used_at`, so with free space on the row's page the
 * update stays on the page and touches none of the table's five indexes. Pages written from now on
 * keep a fifth free; existing pages get the room when they are next rewritten.
 */
export const up = (db: Kysely<unknown>) =>
  runStatements(db, [`alter table identity_access_tokens set (fillfactor = 80)`]);

export const down = (db: Kysely<unknown>) =>
  runStatements(db, [`alter table identity_access_tokens reset (fillfactor)`]);
