import type { Tx } from "../../../db/transaction";
import { randomUUID } from "node:crypto";
import { sql } from "kysely";
import type { Database } from "../../../db/database";
import type { StoredSecretMetadata } from "../../../db/tables/secrets";
import type { TagRef } from "../secret.repository";

export type VersionRow = {
  id: string;
  secret_id: string;
  folder_id: string;
  version: number;
  key: string;
  type: string;
  /** The owner of a personal secret's version; null for a shared one's. */
  user_id: string | null;
  encrypted_fields: string | null;
  encrypted_value: string | null;
  encrypted_comment: string | null;
  skip_multiline_encoding: boolean;
  reminder_note: string | null;
  reminder_repeat_days: number | null;
  metadata: StoredSecretMetadata[];
  tag_ids: string[];
  is_deleted: boolean;
  actor_id: string | null;
  actor_type: string | null;
  created_at: Date | string;
  /** The version's tags that still exist. */
  tags: TagRef[];
};

export const VERSION_COLUMNS = sql`v.id, v.secret_id, v.folder_id, v.version, v.key, v.type, v.user_id, v.encrypted_fields, v.encrypted_value,
  v.encrypted_comment, v.skip_multiline_encoding, v.reminder_note, v.reminder_repeat_days, v.metadata, v.tag_ids, v.is_deleted,
  v.actor_id, v.actor_type, v.created_at,
  coalesce((select json_agg(json_build_object('id', t.id, 'slug', t.slug, 'color', t.color) order by t.slug)
    from secret_tags t where t.id::text in (select jsonb_array_elements_text(v.tag_ids))), '[]'::json) as tags`;

export type VersionInsert = Omit<VersionRow, "created_at" | "tags" | "type">;

export const newVersionId = () => randomUUID();

export const insertVersions = async (trx: Tx, rows: readonly VersionInsert[]) => {
  if (rows.length === 0) return;
  await trx
    .insertInto("secret_versions")
    .values(
      rows.map((r) => ({
        ...r,
        type: r.user_id ? "personal" : "shared",
        metadata: JSON.stringify(r.metadata),
        tag_ids: JSON.stringify(r.tag_ids),
      })),
    )
    .execute();
};

/**
 * One version of the secret named `key` in a folder (reads by name with `version=N`): the shared
 * secret's, or with `ownerId` that person's personal secret's.
 */
export const findVersionByKey = async (
  db: Database,
  folderId: string,
  key: string,
  version: number,
  ownerId?: string,
) => {
  const owner = ownerId === undefined ? sql`v.type = 'shared'` : sql`v.type = 'personal' and v.user_id = ${ownerId}`;
  const { rows } = await sql<VersionRow>`
    select ${VERSION_COLUMNS} from secret_versions v
    where v.folder_id = ${folderId} and v.key = ${key} and v.version = ${version} and ${owner}
      and v.is_deleted = false
    order by v.created_at desc limit 1`.execute(db);
  return rows[0];
};

export const findVersion = async (db: Database, secretId: string, version: number) => {
  const { rows } = await sql<VersionRow>`
    select ${VERSION_COLUMNS} from secret_versions v where v.secret_id = ${secretId} and v.version = ${version}`.execute(
    db,
  );
  return rows[0];
};

/** Newest first. */
export const listVersions = async (db: Database, secretId: string, offset: number, limit: number) => {
  const { rows } = await sql<VersionRow>`
    select ${VERSION_COLUMNS} from secret_versions v where v.secret_id = ${secretId}
    order by v.version desc offset ${offset} limit ${limit}`.execute(db);
  return rows;
};

/** The newest version of a secret (also of a deleted one), for its folder and latest state. */
export const findLatestVersion = async (db: Database, secretId: string) => {
  const { rows } = await sql<VersionRow>`
    select ${VERSION_COLUMNS} from secret_versions v where v.secret_id = ${secretId}
    order by v.version desc limit 1`.execute(db);
  return rows[0];
};
