import type { Kysely } from "kysely";
import { runStatements } from "./run-sql";

/**
 * Folder changes in commits. Every folder's name, description and parent are recorded as versions
 * (`secret_folder_versions`, a deletion is itself a version), each subfolder's stamped with the commit of
 * its parent, so a folder's state at a commit holds its subfolders as well as its secrets. The trigger
 * records whatever path made the change (a route, a rollback, an operator's SQL); a folder deleted with
 * its parent is recorded by the deletion of the topmost one. Roots and reserved folders get a version
 * without a commit (they are never a change), so every folder that ever existed is known with its
 * environment.
 *
 * A deleted folder's history outlives it: its commits and its secrets' versions no longer cascade from
 * the folder row, so a rollback can bring the folder back under its old id with its contents as they
 * were. They go with the environment instead (and so with the project), through `keyward_env_history`.
 *
 * Existing folders get one version each, as of their first commit ("Initialized folder" commits count
 * as one moment, the earliest of them), so no existing folder is taken for one added later.
 */
export const up = (db: Kysely<unknown>) =>
  runStatements(db, [
    `create table secret_folder_versions (
      id uuid primary key default gen_random_uuid(),
      folder_id uuid not null,
      env_id uuid not null,
      parent_id uuid,
      name text not null,
      description text,
      version int not null,
      is_deleted boolean not null default false,
      commit_seq bigint,
      actor_id uuid,
      actor_type text,
      created_at timestamptz not null default now(),
      constraint secret_folder_versions_folder_version_key unique (folder_id, version))`,
    `create index secret_folder_versions_parent_idx on secret_folder_versions (parent_id, commit_seq)`,
    `create index secret_folder_versions_commit_idx on secret_folder_versions (commit_seq) where commit_seq is not null`,
    `create index secret_folder_versions_env_idx on secret_folder_versions (env_id)`,
    `insert into secret_folder_versions (folder_id, env_id, parent_id, name, description, version, commit_seq, actor_type, created_at)
      select f.id, f.env_id, f.parent_id, f.name, f.description, 1,
        case when f.parent_id is null or f.is_reserved then null
             when c.initial then (select min(seq) from folder_commits where tx_key like 'initial:%')
             else c.seq end,
        'platform', f.created_at
      from secret_folders f
      left join (select folder_id, min(seq) as seq, bool_or(tx_key like 'initial:%') as initial
                 from folder_commits group by folder_id) c on c.folder_id = f.id`,
    `alter table secret_versions drop constraint secret_versions_folder_id_fkey`,
    `alter table folder_commits drop constraint folder_commits_folder_id_fkey`,
    // Who made a change outside a secret's own version: the writer names itself for its transaction.
    `create function keyward_commit_actor_id() returns uuid language sql stable as $$
      select nullif(current_setting('keyward.actor_id', true), '')::uuid $$`,
    `create function keyward_commit_actor_type() returns text language sql stable as $$
      select nullif(current_setting('keyward.actor_type', true), '') $$`,
    `create function keyward_folder_version() returns trigger language plpgsql as $$
      declare
        f secret_folders%rowtype;
        deleted boolean := tg_op = 'DELETE';
        s bigint;
      begin
        if deleted then f := old; else f := new; end if;
        if deleted and (f.parent_id is null or f.is_reserved
            or not exists (select 1 from secret_folders where id = f.parent_id)) then
          return null;
        end if;
        if f.parent_id is not null and not f.is_reserved then
          s := keyward_folder_commit(f.parent_id, keyward_commit_actor_id(), keyward_commit_actor_type(), null);
        end if;
        insert into secret_folder_versions
          (folder_id, env_id, parent_id, name, description, version, is_deleted, commit_seq, actor_id, actor_type)
        values (f.id, f.env_id, f.parent_id, f.name, f.description,
          coalesce((select max(version) from secret_folder_versions where folder_id = f.id), 0) + 1,
          deleted, s, keyward_commit_actor_id(), keyward_commit_actor_type());
        return null;
      end $$`,
    `create trigger secret_folders_version after insert or delete on secret_folders
      for each row execute function keyward_folder_version()`,
    `create trigger secret_folders_version_update after update of name, description, parent_id on secret_folders
      for each row when (old.name is distinct from new.name or old.description is distinct from new.description
        or old.parent_id is distinct from new.parent_id)
      execute function keyward_folder_version()`,
    `create function keyward_env_history() returns trigger language plpgsql as $$
      begin
        delete from secret_versions where folder_id in
          (select folder_id from secret_folder_versions where env_id = old.id);
        delete from folder_commits where folder_id in
          (select folder_id from secret_folder_versions where env_id = old.id);
        delete from secret_folder_versions where env_id = old.id;
        return null;
      end $$`,
    `create trigger environments_history after delete on environments
      for each row execute function keyward_env_history()`,
    // The folder-created commit takes the writer's name too.
    `create or replace function keyward_folder_created() returns trigger language plpgsql as $$
      begin
        perform keyward_folder_commit(new.id, keyward_commit_actor_id(), keyward_commit_actor_type(), 'Folder created');
        return null;
      end $$`,
  ]);

export const down = (db: Kysely<unknown>) =>
  runStatements(db, [
    `create or replace function keyward_folder_created() returns trigger language plpgsql as $$
      begin
        perform keyward_folder_commit(new.id, null, null, 'Folder created');
        return null;
      end $$`,
    "drop trigger environments_history on environments",
    "drop function keyward_env_history()",
    "drop trigger secret_folders_version_update on secret_folders",
    "drop trigger secret_folders_version on secret_folders",
    "drop function keyward_folder_version()",
    "drop function keyward_commit_actor_type()",
    "drop function keyward_commit_actor_id()",
    "delete from secret_versions v where not exists (select 1 from secret_folders f where f.id = v.folder_id)",
    "delete from folder_commits c where not exists (select 1 from secret_folders f where f.id = c.folder_id)",
    `alter table secret_versions add constraint secret_versions_folder_id_fkey
      foreign key (folder_id) references secret_folders(id) on delete cascade`,
    `alter table folder_commits add constraint folder_commits_folder_id_fkey
      foreign key (folder_id) references secret_folders(id) on delete cascade`,
    "drop table secret_folder_versions",
  ]);
