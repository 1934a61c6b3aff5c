import { sql } from "kysely";
import { PLAN_EACH_TIME, type Database } from "../../../db/database";
import type { SecretRow } from "../secret.repository";
import type { KeyFilter, SearchCursor } from "./search-patterns";

export type SearchFolder = { id: string; environment: string; path: string };

/**
 * Every folder of a project (or of one of its environments) with its environment and path,
 * reserved folders left out, depth at most 20 as the recursive lists go.
 */
export const listProjectFolders = async (db: Database, projectId: string, environment?: string) => {
  const { rows } = await sql<SearchFolder>`
    with recursive tree as (
      select f.id, e.slug as environment, '/'::text as path, 0 as depth
      from environments e join secret_folders f on f.env_id = e.id and f.parent_id is null
      where e.project_id = ${projectId} ${environment === undefined ? sql`` : sql`and e.slug = ${environment}`}
      union all
      select c.id, t.environment, (case when t.path = '/' then '' else t.path end || '/' || c.name)::text, t.depth + 1
      from secret_folders c join tree t on c.parent_id = t.id
      where c.is_reserved = false and t.depth < 20
    )
    select id, environment, path from tree`.execute(db);
  return rows;
};

export type SearchRow = SecretRow & { updated_at: string };

const keyCondition = (filter: KeyFilter | undefined) => {
  if (!filter) return sql``;
  const not = filter.negated ? sql`not ` : sql``;
  return filter.kind === "like"
    ? sql`and ${not}(s.key ilike ${filter.pattern} escape '\\')`
    : sql`and ${not}(s.key ~* ${filter.pattern})`;
};

/**
 * One page of shared secrets of some folders, in (key, folder) order after a cursor. The page is
 * chosen from the (folder_id, key) index alone when no tag is asked for (an index-only scan of the
 * folders' keys); only the chosen rows are read whole, with their tags.
 */
export const searchSecretRows = async (
  db: Database,
  q: {
    projectId: string;
    folderIds: readonly string[];
    key?: KeyFilter;
    tagSlugs?: readonly string[];
    after?: SearchCursor;
    take: number;
  },
): Promise<SearchRow[]> => {
  if (q.folderIds.length === 0) return [];
  const tagCondition =
    q.tagSlugs && q.tagSlugs.length > 0
      ? sql`and s.id in (select l.secret_id from secret_tag_links l join secret_tags t on t.id = l.tag_id
          where t.project_id = ${q.projectId} and t.slug = any(${[...q.tagSlugs]}::text[]))`
      : sql``;
  const afterCondition = q.after
    ? sql`and (s.key, s.folder_id) > (${q.after.key}::text, ${q.after.folderId}::uuid)`
    : sql``;
  // Planned on every execution: the folder list's size decides between walking the keys in order and
  // reading each folder's keys (see PLAN_EACH_TIME).
  const { rows } = await sql<SearchRow>`${sql.raw(PLAN_EACH_TIME)}
    with page as (
      select s.key, s.folder_id from secrets s
      where s.folder_id = any(${[...q.folderIds]}::uuid[]) and s.type = 'shared'
        ${keyCondition(q.key)} ${tagCondition} ${afterCondition}
      order by s.key, s.folder_id
      limit ${q.take}
    )
    select s.id, s.folder_id, s.key, s.type, s.user_id, s.version, s.encrypted_fields, s.encrypted_value,
      s.encrypted_comment, s.skip_multiline_encoding, s.reminder_note, s.reminder_repeat_days, s.metadata,
      s.actor_id, s.actor_type, s.created_at,
      to_char(s.updated_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as updated_at,
      coalesce((select json_agg(json_build_object('id', t.id, 'slug', t.slug, 'color', t.color) order by t.slug)
        from secret_tag_links l join secret_tags t on t.id = l.tag_id where l.secret_id = s.id), '[]'::json) as tags
    from page join secrets s on s.folder_id = page.folder_id and s.key = page.key and s.type = 'shared'
    order by s.key, s.folder_id`.execute(db);
  return rows;
};
