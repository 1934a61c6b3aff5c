import type { Kysely } from "kysely";
import { runStatements } from "./run-sql";

/**
 * Folder commits (point-in-time recovery): every transaction that writes versions of a folder's shared
 * secrets records one commit of that folder, whatever path made the write (a route, a batch, a merged
 * change request, a rotation, a rollback, an operator's SQL). The database assigns it, so no writer can
 * forget: a trigger before each shared version's insert finds the commit of (this transaction, this
 * folder), creating it on the first row, and stamps the version with its `seq`. A transaction is told
 * apart by a random key it keeps in a transaction-local setting (`keyward.commit_tx`), never by its
 * transaction id, which starts again after a restore into another cluster. A writer may name the
 * commit in `keyward.commit_message`; otherwise readers derive the message from its changes.
 *
 * `seq` orders commits; the state of a folder at a commit is, for each secret, its newest version with
 * `commit_seq <= seq`, when that version lies in the folder and is not a deletion. Existing folders get
 * one "Initialized folder" commit holding each secret's newest version; older versions keep a null
 * `commit_seq` (they precede every commit). A new folder starts with a "Folder created" commit, so a
 * folder can be rolled back to empty. Personal secrets' versions belong to no commit.
 */
export const up = (db: Kysely<unknown>) =>
  runStatements(db, [
    `create table folder_commits (
      id uuid primary key default gen_random_uuid(),
      seq bigserial not null unique,
      folder_id uuid not null references secret_folders(id) on delete cascade,
      tx_key text not null,
      actor_id uuid,
      actor_type text,
      message text,
      created_at timestamptz not null default now())`,
    `create unique index folder_commits_tx_folder_idx on folder_commits (tx_key, folder_id)`,
    `create index folder_commits_folder_seq_idx on folder_commits (folder_id, seq)`,
    `alter table secret_versions add column commit_seq bigint`,
    `create index secret_versions_commit_seq_idx on secret_versions (commit_seq) where commit_seq is not null`,
    `create function keyward_commit_tx() returns text language plpgsql as $$
      declare k text := current_setting('keyward.commit_tx', true);
      begin
        if k is null or k = '' then
          k := gen_random_uuid()::text;
          perform set_config('keyward.commit_tx', k, true);
        end if;
        return k;
      end $$`,
    `create function keyward_folder_commit(p_folder uuid, p_actor_id uuid, p_actor_type text, p_message text)
      returns bigint language plpgsql as $$
      declare k text := keyward_commit_tx(); s bigint;
      begin
        select seq into s from folder_commits where tx_key = k and folder_id = p_folder;
        if s is null then
          insert into folder_commits (folder_id, tx_key, actor_id, actor_type, message)
            values (p_folder, k, p_actor_id, p_actor_type,
              coalesce(nullif(current_setting('keyward.commit_message', true), ''), p_message))
            returning seq into s;
        end if;
        return s;
      end $$`,
    `create function keyward_version_commit() returns trigger language plpgsql as $$
      begin
        new.commit_seq := keyward_folder_commit(new.folder_id, new.actor_id, new.actor_type, null);
        return new;
      end $$`,
    `create trigger secret_versions_commit before insert on secret_versions
      for each row when (new.type = 'shared') execute function keyward_version_commit()`,
    `create function keyward_folder_created() returns trigger language plpgsql as $$
      begin
        perform keyward_folder_commit(new.id, null, null, 'Folder created');
        return null;
      end $$`,
    `create trigger secret_folders_commit after insert on secret_folders
      for each row execute function keyward_folder_created()`,
    `insert into folder_commits (folder_id, tx_key, actor_type, message)
      select id, 'initial:' || id, 'platform', 'Initialized folder' from secret_folders`,
    `update secret_versions v set commit_seq = c.seq
      from (select distinct on (secret_id) id, folder_id from secret_versions
            where type = 'shared' order by secret_id, version desc) latest
      join folder_commits c on c.folder_id = latest.folder_id and c.tx_key = 'initial:' || latest.folder_id
      where v.id = latest.id`,
  ]);

export const down = (db: Kysely<unknown>) =>
  runStatements(db, [
    "drop trigger secret_folders_commit on secret_folders",
    "drop function keyward_folder_created()",
    "drop trigger secret_versions_commit on secret_versions",
    "drop function keyward_version_commit()",
    "drop function keyward_folder_commit(uuid, uuid, text, text)",
    "drop function keyward_commit_tx()",
    "alter table secret_versions drop column commit_seq",
    "drop table folder_commits",
  ]);
