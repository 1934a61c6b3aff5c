import type { Kysely } from "kysely";
import { runStatements } from "./run-sql";

/**
 * Indexes for searching a project's secrets by key. `(key, folder_id)` serves pages in key order
 * (the search's keyset) without reading every secret of the project first. Where PostgreSQL has
 * pg_trgm, a trigram index serves substring and wildcard key queries; where it has not (embedded
 * PGlite loads no extensions), the search runs on the btree indexes alone.
 */
export const up = (db: Kysely<unknown>) =>
  runStatements(db, [
    `create index secrets_shared_key_folder_idx on secrets (key, folder_id) where type = 'shared'`,
    `do $$
    begin
      if exists (select 1 from pg_available_extensions where name = 'pg_trgm') then
        create extension if not exists pg_trgm;
        create index secrets_shared_key_trgm_idx on secrets using gin (key gin_trgm_ops) where type = 'shared';
      end if;
    exception when others then
      raise notice 'secret search runs without a trigram index: %', sqlerrm;
    end $$`,
  ]);

export const down = (db: Kysely<unknown>) =>
  runStatements(db, [
    "drop index if exists secrets_shared_key_trgm_idx",
    "drop index if exists secrets_shared_key_folder_idx",
  ]);
