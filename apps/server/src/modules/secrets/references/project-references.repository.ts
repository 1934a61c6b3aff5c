import { sql } from "kysely";
import type { Database } from "../../../db/database";
import type { Tx } from "../../../db/transaction";
import { ROW_COLUMNS, type SecretRow, type TagRef } from "../secret.repository";

/** A shared secret of a project with its place, the value still sealed. */
export type PlacedSecretRow = {
  id: string;
  key: string;
  encrypted_fields: string | null;
  encrypted_value: string | null;
  env_slug: string;
  path: string;
  tags: TagRef[];
};

/**
 * Every shared secret of a project with its environment slug and folder path. References are only
 * in the sealed values, so finding who references a secret means reading them all (renames, moves
 * and dependency trees; never a read of a secret's own value).
 */
export const listProjectSecretsWithPlace = async (db: Database, projectId: string) => {
  const { rows } = await sql<PlacedSecretRow>`
    with recursive tree as (
      select f.id, f.env_id, '/'::text as path, 0 as depth
      from secret_folders f join environments e on e.id = f.env_id
      where e.project_id = ${projectId} and f.parent_id is null
      union all
      select c.id, c.env_id, (case when t.path = '/' then '/' || c.name else t.path || '/' || c.name end)::text,
        t.depth + 1
      from secret_folders c join tree t on c.parent_id = t.id where t.depth < 64
    )
    select s.id, s.key, s.encrypted_fields, s.encrypted_value, e.slug as env_slug, tree.path,
      coalesce((select json_agg(json_build_object('id', t.id, 'slug', t.slug, 'color', t.color) order by t.slug)
        from secret_tag_links l join secret_tags t on t.id = l.tag_id where l.secret_id = s.id), '[]'::json) as tags
    from secrets s join tree on tree.id = s.folder_id join environments e on e.id = tree.env_id
    where s.type = 'shared'
    order by s.id`.execute(db);
  return rows;
};

/** Rows by id, locked for the caller's transaction in id order (so concurrent writers lock alike). */
export const lockSecretsByIds = async (trx: Tx, ids: readonly string[]) => {
  if (ids.length === 0) return [];
  const { rows } = await sql<SecretRow>`
    select ${ROW_COLUMNS} from secrets s where s.id = any(${[...ids]}::uuid[]) and s.type = 'shared'
    order by s.id for update of s`.execute(trx);
  return rows;
};
