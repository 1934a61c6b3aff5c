import type { Tx } from "../../db/transaction";
import { CompiledQuery, sql } from "kysely";
import { batchedLookup } from "../../db/batched-lookup";
import { keepGenericPlan, type Database } from "../../db/database";
import type { StoredSecretMetadata } from "../../db/tables/secrets";

export type TagRef = { id: string; slug: string; color: string | null };

/** A secret row as stored: value and comment are sealed, in one of two forms (see secret-crypto.ts). */
export type SecretRow = {
  id: string;
  folder_id: string;
  key: string;
  type: string;
  user_id: string | null;
  version: number;
  encrypted_fields: string | null;
  encrypted_value: string | null;
  encrypted_comment: string | null;
  skip_multiline_encoding: boolean;
  reminder_note: string | null;
  reminder_repeat_days: number | null;
  metadata: StoredSecretMetadata[];
  actor_id: string | null;
  actor_type: string | null;
  created_at: Date | string;
  updated_at: Date | string;
  tags: TagRef[];
};

const ROW_COLUMNS_SQL = `s.id, s.folder_id, s.key, s.type, s.user_id, s.version, s.encrypted_fields, s.encrypted_value,
  s.encrypted_comment, s.skip_multiline_encoding, s.reminder_note, s.reminder_repeat_days, s.metadata, s.actor_id, s.actor_type,
  s.created_at, s.updated_at,
  coalesce((select json_agg(json_build_object('id', t.id, 'slug', t.slug, 'color', t.color) order by t.slug)
    from secret_tag_links l join secret_tags t on t.id = l.tag_id where l.secret_id = s.id), '[]'::json) as tags`;
export const ROW_COLUMNS = sql.raw(ROW_COLUMNS_SQL);

/**
 * The environment and the folder at a path (null when a segment is missing), in one round trip;
 * undefined when the environment does not exist.
 */
export const resolveFolder = async (db: Database, projectId: string, environment: string, path: string) => {
  const { rows } = await sql<{ env_id: string; env_slug: string; folder_id: string | null }>`
    select e.id as env_id, e.slug as env_slug, secret_folder_at(e.id, ${path}) as folder_id
    from environments e where e.project_id = ${projectId} and e.slug = ${environment}`.execute(db);
  return rows[0];
};

export type FolderAndSecret = { env_id: string; env_slug: string; folder_id: string | null; secret?: SecretRow };

/** What the permission lookup needs of the project (authz's ProjectKey). */
export type ProjectOfGet = { id: string; org_id: string; type: string; permission_version: string };

/** A get by name: the project (undefined when missing) and, when the environment exists, the place. */
export type SecretAtPath = { project?: ProjectOfGet; place?: FolderAndSecret };

type PlaceRow = SecretRow & {
  p_id: string;
  p_org_id: string;
  p_type: string;
  p_permission_version: string;
  env_id: string | null;
  env_slug: string | null;
  at_folder_id: string | null;
};

const PLACE_SELECT = `p.id as p_id, p.org_id as p_org_id, p.type as p_type, p.permission_version as p_permission_version,
      e.id as env_id, e.slug as env_slug, place.folder_id as at_folder_id, ${ROW_COLUMNS_SQL}`;
const PLACE_JOINS = `left join environments e on e.project_id = p.id and e.slug = q.env
    left join lateral (select secret_folder_at(e.id, q.path) as folder_id) place on true
    left join secrets s on s.folder_id = place.folder_id and s.key = q.key and s.type = 'shared'`;

/**
 * Many gets by name in one statement of fixed text (one kept plan): for each lookup the project
 * row, the environment, the folder at the path (null when a segment is missing) and the shared
 * secret of that key in it; no row when the project does not exist.
 */
const SECRETS_AT_PATHS = keepGenericPlan(`select q.n, ${PLACE_SELECT}
    from unnest($1::uuid[], $2::text[], $3::text[], $4::text[]) with ordinality as q(project_id, env, path, key, n)
    join projects p on p.id = q.project_id
    ${PLACE_JOINS}`);

const secretsAtPaths = (db: Database, lookups: readonly string[]) => {
  const parts = lookups.map((l) => l.split("\u0000"));
  return db
    .executeQuery<PlaceRow & { n: string | number; lookup: string }>(
      CompiledQuery.raw(SECRETS_AT_PATHS, [
        parts.map((p) => p[0]),
        parts.map((p) => p[1]),
        parts.map((p) => p[2]),
        parts.map((p) => p[3]),
      ]),
    )
    .then(({ rows }) => {
      // Each row names its lookup by its position in the batch; tagged in place, not copied.
      for (const row of rows) row.lookup = lookups[Number(row.n) - 1]!;
      return rows;
    });
};
const batchedSecretAtPath = batchedLookup(secretsAtPaths, (row) => row.lookup);

const findSecretAtPathAlone = async (
  db: Database,
  projectId: string,
  environment: string,
  path: string,
  key: string,
): Promise<PlaceRow | undefined> => {
  const { rows } = await sql<PlaceRow>`
    select ${sql.raw(PLACE_SELECT)}
    from (select ${projectId}::uuid as project_id, ${environment}::text as env, ${path}::text as path, ${key}::text as key) q
    join projects p on p.id = q.project_id
    ${sql.raw(PLACE_JOINS)}`.execute(db);
  return rows[0];
};

/**
 * A get by name in one round trip, shared with the other gets of the same event-loop turn: the
 * project's row for the permission check together with the place and the secret, which callers
 * read only once that check has passed. `projectId` must be a UUID.
 */
export const findSecretAtPath = async (
  db: Database,
  projectId: string,
  environment: string,
  path: string,
  key: string,
): Promise<SecretAtPath> => {
  const parts = [projectId, environment, path, key];
  // NUL separates the parts of a batch key (and PostgreSQL refuses it in text): such a lookup goes alone,
  // so it can neither alias another key nor fail the batch of other requests.
  const row = parts.some((p) => p.includes("\u0000"))
    ? await findSecretAtPathAlone(db, projectId, environment, path, key)
    : await batchedSecretAtPath(db, parts.join("\u0000"));
  if (!row) return {};
  // The row is the secret row too (its extra columns are never read as such): no copy per request.
  const project = {
    id: row.p_id,
    org_id: row.p_org_id,
    type: row.p_type,
    permission_version: row.p_permission_version,
  };
  if (row.env_id === null || row.env_slug === null) return { project };
  const place = { env_id: row.env_id, env_slug: row.env_slug, folder_id: row.at_folder_id };
  return { project, place: row.id ? { ...place, secret: row } : place };
};

export const findSecretByKey = async (db: Database, folderId: string, key: string, lock = false) => {
  const { rows } = await sql<SecretRow>`
    select ${ROW_COLUMNS} from secrets s
    where s.folder_id = ${folderId} and s.key = ${key} and s.type = 'shared'
    ${lock ? sql`for update of s` : sql``}`.execute(db);
  return rows[0];
};

/** One person's personal secret of a key in a folder (never anyone else's). */
export const findPersonalSecret = async (
  db: Database,
  folderId: string,
  key: string,
  ownerId: string,
  lock = false,
) => {
  const { rows } = await sql<SecretRow>`
    select ${ROW_COLUMNS} from secrets s
    where s.folder_id = ${folderId} and s.key = ${key} and s.type = 'personal' and s.user_id = ${ownerId}
    ${lock ? sql`for update of s` : sql``}`.execute(db);
  return rows[0];
};

/** Rows of some keys in a folder, locked for the caller's transaction, in key order (so batches lock alike). */
export const lockSecretsByKeys = async (trx: Tx, folderId: string, keys: readonly string[]) => {
  if (keys.length === 0) return [];
  const { rows } = await sql<SecretRow>`
    select ${ROW_COLUMNS} from secrets s
    where s.folder_id = ${folderId} and s.key = any(${[...keys]}::text[]) and s.type = 'shared'
    order by s.key for update of s`.execute(trx);
  return rows;
};

export type SecretWithPlace = SecretRow & { env_id: string; env_slug: string; project_id: string };

/** A secret with its environment and project (for reads by id); undefined when missing. */
export const findSecretWithPlace = async (db: Database, secretId: string) => {
  const { rows } = await sql<SecretWithPlace>`
    select ${ROW_COLUMNS}, e.id as env_id, e.slug as env_slug, e.project_id
    from secrets s join secret_folders f on f.id = s.folder_id join environments e on e.id = f.env_id
    where s.id = ${secretId}`.execute(db);
  return rows[0];
};

export const lockSecretById = async (trx: Tx, secretId: string) => {
  const { rows } =
    await sql<SecretRow>`select ${ROW_COLUMNS} from secrets s where s.id = ${secretId} for update of s`.execute(trx);
  return rows[0];
};

/** Secrets by id (wherever they are), locked for the caller's transaction, in id order. */
export const lockSecretsByIds = async (trx: Tx, ids: readonly string[]) => {
  if (ids.length === 0) return [];
  const { rows } = await sql<SecretRow>`
    select ${ROW_COLUMNS} from secrets s where s.id = any(${[...ids]}::uuid[]) order by s.id for update of s`.execute(
    trx,
  );
  return rows;
};

/** "/a/b" of a folder (walking its parents), with its environment and project; undefined when missing. */
export const findFolderPlace = async (db: Database, folderId: string) => {
  const { rows } = await sql<{ path: string; env_id: string; env_slug: string; project_id: string }>`
    with recursive chain as (
      select id, parent_id, name, env_id, 0 as depth from secret_folders where id = ${folderId}
      union all
      select p.id, p.parent_id, p.name, p.env_id, c.depth + 1 from secret_folders p join chain c on p.id = c.parent_id
    )
    select coalesce('/' || string_agg(chain.name, '/' order by chain.depth desc) filter (where chain.parent_id is not null), '/') as path,
      min(e.id::text)::uuid as env_id, min(e.slug) as env_slug, min(e.project_id::text)::uuid as project_id
    from chain join environments e on e.id = chain.env_id`.execute(db);
  const row = rows[0];
  return row?.env_id ? row : undefined;
};

/** Every folder below one (depth ≤ 20) with its path, for recursive lists. */
export const listFolderTree = async (db: Database, folderId: string, basePath: string) => {
  const prefix = basePath === "/" ? "" : basePath;
  const { rows } = await sql<{ id: string; path: string }>`
    with recursive tree as (
      select f.id, (${prefix}::text || '/' || f.name)::text as path, 1 as depth
      from secret_folders f where f.parent_id = ${folderId} and f.is_reserved = false
      union all
      select c.id, (t.path || '/' || c.name)::text, t.depth + 1
      from secret_folders c join tree t on c.parent_id = t.id where c.is_reserved = false and t.depth < 20
    )
    select id, path from tree order by path`.execute(db);
  return rows;
};

export const findEnvironmentsBySlugs = (db: Database, projectId: string, slugs: readonly string[]) =>
  slugs.length === 0
    ? Promise.resolve([])
    : db
        .selectFrom("environments")
        .select(["id", "slug"])
        .where("project_id", "=", projectId)
        .where("slug", "in", [...slugs])
        .execute();

export type SecretInsert = {
  id: string;
  folder_id: string;
  key: string;
  encrypted_fields: string;
  encrypted_value: null;
  encrypted_comment: null;
  skip_multiline_encoding: boolean;
  reminder_note: string | null;
  reminder_repeat_days: number | null;
  metadata: StoredSecretMetadata[];
  actor_id: string;
  actor_type: string;
  /** The owner of a personal secret; absent (or null) for a shared one. */
  user_id?: string | null;
  /** 1 unless the secret returns under an id that has versions already. */
  version?: number;
};

export const insertSecrets = (trx: Tx, rows: readonly SecretInsert[]) =>
  trx
    .insertInto("secrets")
    .values(
      rows.map((r) => ({
        ...r,
        type: r.user_id ? "personal" : "shared",
        user_id: r.user_id ?? null,
        metadata: JSON.stringify(r.metadata),
      })),
    )
    .returning(["id", "version", "created_at", "updated_at"])
    .execute();

export type SecretChange = Partial<
  Pick<
    SecretInsert,
    | "key"
    | "encrypted_fields"
    | "encrypted_value"
    | "encrypted_comment"
    | "skip_multiline_encoding"
    | "reminder_note"
    | "reminder_repeat_days"
    | "metadata"
  >
> & { actor_id: string; actor_type: string };

/** One more version: the increment happens under the row lock the caller holds. */
export const updateSecretRow = (trx: Tx, secretId: string, change: SecretChange) =>
  trx
    .updateTable("secrets")
    .set({
      ...change,
      metadata: change.metadata === undefined ? undefined : JSON.stringify(change.metadata),
      version: sql<number>`version + 1`,
      updated_at: new Date(),
    })
    .where("id", "=", secretId)
    .returning(["id", "version", "updated_at"])
    .executeTakeFirstOrThrow();

/** Shared rows go with their personal overrides of the same key. */
export const deleteSecretRows = (trx: Tx, folderId: string, keys: readonly string[]) =>
  trx
    .deleteFrom("secrets")
    .where("folder_id", "=", folderId)
    .where("key", "in", [...keys])
    .execute();

/** One row alone (a personal secret: the shared one and the other people's stay). */
export const deleteSecretRowById = (trx: Tx, secretId: string) =>
  trx.deleteFrom("secrets").where("id", "=", secretId).execute();

export const insertTagLinks = (trx: Tx, links: { secret_id: string; tag_id: string }[]) =>
  trx.insertInto("secret_tag_links").values(links).execute();

export const replaceTagLinks = async (trx: Tx, secretId: string, tagIds: readonly string[]) => {
  await trx.deleteFrom("secret_tag_links").where("secret_id", "=", secretId).execute();
  if (tagIds.length > 0)
    await trx
      .insertInto("secret_tag_links")
      .values(tagIds.map((tag_id) => ({ secret_id: secretId, tag_id })))
      .execute();
};
