import type { Kysely } from "kysely";
import { runStatements } from "./run-sql";

/**
 * Fixed-window rate-limit counters shared by every worker and instance (one row per limit, client IP
 * and window; old windows are swept by a job).
 *
 * secret_folder_at as a PL/pgSQL loop: one cached index lookup per segment. The recursive CTE it
 * replaces cost about 8-12 ms for a 255-segment path on PGlite (3-4x the loop), and PGlite's single
 * connection makes every other request wait for it.
 */
export const up = (db: Kysely<unknown>) =>
  runStatements(db, [
    `create table rate_limit_counters (
      key text not null,
      window_start timestamptz not null,
      hits integer not null,
      primary key (key, window_start))`,
    `create index rate_limit_counters_window_start_idx on rate_limit_counters (window_start)`,
    `create or replace function secret_folder_at(p_env uuid, p_path text) returns uuid language plpgsql stable as $$
      declare
        current_id uuid;
        segment text;
      begin
        select f.id into current_id from secret_folders f where f.env_id = p_env and f.parent_id is null;
        if current_id is null then return null; end if;
        foreach segment in array coalesce(string_to_array(nullif(trim(both '/' from p_path), ''), '/'), '{}'::text[]) loop
          select c.id into current_id from secret_folders c where c.parent_id = current_id and c.name = segment;
          if current_id is null then return null; end if;
        end loop;
        return current_id;
      end
    $$`,
  ]);

export const down = (db: Kysely<unknown>) =>
  runStatements(db, [
    "drop table rate_limit_counters",
    `create or replace function secret_folder_at(p_env uuid, p_path text) returns uuid language sql stable as $$
      with recursive segments as (
        select s.name, s.depth::int as depth
        from unnest(string_to_array(trim(both '/' from p_path), '/')) with ordinality as s(name, depth)
      ), walk as (
        select f.id, 0 as depth from secret_folders f where f.env_id = p_env and f.parent_id is null
        union all
        select c.id, w.depth + 1
        from walk w
        join segments s on s.depth = w.depth + 1
        join secret_folders c on c.parent_id = w.id and c.name = s.name
      )
      select id from walk
      where depth = (select count(*) from segments)
    $$`,
  ]);
