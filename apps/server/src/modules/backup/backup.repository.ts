import { sql, type RawBuilder } from "kysely";
import type { Database } from "../../db/database";
import type { StoredSecretMetadata } from "../../db/tables/secrets";
import { dependencyOrder, type CatalogTable } from "./table-order";

/**
 * The backup's SQL. It reads and writes every table of the `public` schema through the catalog, so a
 * table a later migration adds is carried without a change here. Values travel as their text form
 * (`column::text`, read back by a cast to the column's type), the one form every type has; the
 * session settings below pin that form so both ends read it alike.
 */

/** The migrations' own bookkeeping: a target gets it by running the migrations, never from a file. */
const BOOKKEEPING: readonly string[] = ["kysely_migration", "kysely_migration_lock"];

/** Kysely's migration lock: a restore holds it, so a server starting on the same database waits for the restore. */
const MIGRATION_LOCK_ID = "3853314791062309107";

const CURSOR = sql.raw("kw_backup_rows");

const quoteIdent = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** Dates in ISO form and UTC, intervals, bytea and floats in their exact forms, for this transaction. */
export const pinTextForms = async (db: Database) => {
  for (const setting of [
    sql`set local datestyle = 'ISO, YMD'`,
    sql`set local intervalstyle = 'postgres'`,
    sql`set local timezone = 'UTC'`,
    sql`set local bytea_output = 'hex'`,
    sql`set local extra_float_digits = 1`,
  ])
    await setting.execute(db);
};

/** Every table of the schema but the migrations' bookkeeping, parents before the tables referencing them. */
export const listTables = async (db: Database): Promise<CatalogTable[]> => {
  const { rows } = await sql<{ table_name: string; column_name: string; column_type: string }>`
    select c.relname as table_name, a.attname as column_name,
      format_type(a.atttypid, a.atttypmod) as column_type
    from pg_class c
    join pg_namespace n on n.oid = c.relnamespace
    join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped and a.attgenerated = ''
    where n.nspname = 'public' and c.relkind in ('r', 'p') and not c.relispartition
    order by c.relname, a.attnum`.execute(db);
  const tables = new Map<string, CatalogTable>();
  for (const row of rows) {
    if (BOOKKEEPING.includes(row.table_name)) continue;
    const table = tables.get(row.table_name) ?? { name: row.table_name, columns: [] };
    table.columns.push({ name: row.column_name, type: row.column_type });
    tables.set(row.table_name, table);
  }
  const { rows: links } = await sql<{ child: string; parent: string }>`
    select distinct child.relname as child, parent.relname as parent
    from pg_constraint k
    join pg_class child on child.oid = k.conrelid
    join pg_class parent on parent.oid = k.confrelid
    join pg_namespace n on n.oid = child.relnamespace
    where k.contype = 'f' and n.nspname = 'public'`.execute(db);
  return dependencyOrder([...tables.values()], links);
};

/** The schema's sequences (serial and identity columns' included), by name. */
export const listSequences = async (db: Database) =>
  (
    await sql<{ name: string }>`
      select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = 'public' and c.relkind = 'S' order by c.relname`.execute(db)
  ).rows.map((row) => row.name);

export const readSequence = async (db: Database, name: string) => {
  const { rows } = await sql<{ value: string; called: boolean }>`
    select last_value::text as value, is_called as called from ${sql.id("public", name)}`.execute(db);
  return rows[0]!;
};

export const setSequence = (db: Database, name: string, value: string, called: boolean) =>
  sql`select setval(${`public.${quoteIdent(name)}`}::regclass, ${value}::bigint, ${called})`.execute(db);

/** The last migration applied, or undefined when the database holds no Keyward schema. */
export const lastAppliedMigration = async (db: Database): Promise<string | undefined> => {
  const { rows: found } = await sql<{ present: boolean }>`
    select to_regclass('public.kysely_migration') is not null as present`.execute(db);
  if (!found[0]?.present) return undefined;
  const { rows } = await sql<{ name: string }>`
    select name from kysely_migration order by name desc limit 1`.execute(db);
  return rows[0]?.name;
};

export const countRows = async (db: Database, table: string) => {
  const { rows } = await sql<{ n: string }>`select count(*)::text as n from ${sql.id("public", table)}`.execute(db);
  return Number(rows[0]!.n);
};

/** A cursor over a table's rows, each one JSON array of its columns' text forms (null for NULL). */
export const openRowCursor = (db: Database, table: CatalogTable) =>
  sql`declare ${CURSOR} no scroll cursor for
    select to_json(array[${sql.join(
      table.columns.map((column) => sql`${sql.id("kw_row", column.name)}::text`),
    )}]::text[])::text as j
    from ${sql.id("public", table.name)} as kw_row`.execute(db);

export const fetchRows = async (db: Database, count: number) =>
  (await sql<{ j: string }>`fetch forward ${sql.lit(count)} from ${CURSOR}`.execute(db)).rows;

export const closeRowCursor = (db: Database) => sql`close ${CURSOR}`.execute(db);

/** Inserts rows given as a JSON array of rows (each an array of text forms, in `columns`' order). */
export const insertRows = (db: Database, table: CatalogTable, rowsJson: string) => {
  const values: RawBuilder<unknown>[] = table.columns.map(
    (column, i) => sql`(kw_row.j ->> ${sql.lit(i)})::${sql.raw(column.type)}`,
  );
  return sql`insert into ${sql.id("public", table.name)} (${sql.join(table.columns.map((c) => sql.id(c.name)))})
    overriding system value
    select ${sql.join(values)} from jsonb_array_elements(${rowsJson}::jsonb) as kw_row(j)`.execute(db);
};

export const emptyTable = (db: Database, table: string) => sql`delete from ${sql.id("public", table)}`.execute(db);

/** Relations of the schema (tables, views, sequences): none in an empty database. */
export const countSchemaRelations = async (db: Database) => {
  const { rows } = await sql<{ n: string }>`
    select count(*)::text as n from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = 'public' and c.relkind in ('r', 'p', 'v', 'm', 'S', 'f')`.execute(db);
  return Number(rows[0]!.n);
};

export const holdMigrationLock = (db: Database) =>
  sql`select pg_advisory_xact_lock(${sql.lit(MIGRATION_LOCK_ID)}::bigint)`.execute(db);

/** `replica`: triggers (foreign-key checks included) do not fire, so rows go in exactly as they were. */
export const setReplicationRole = (db: Database, role: "replica" | "origin") =>
  sql`set local session_replication_role = ${sql.raw(role)}`.execute(db);

export const transactionStatement = (db: Database, statement: "begin" | "commit" | "rollback" | "snapshot") =>
  (statement === "snapshot"
    ? sql`start transaction isolation level repeatable read, read only`
    : sql.raw(statement)
  ).execute(db);

/** The projects' wrapped data keys, a page at a time in id order. */
export const projectDataKeysAfter = (db: Database, after: string | undefined, limit: number) => {
  let query = db.selectFrom("project_data_keys").select(["id", "project_id", "wrapped_key"]);
  if (after !== undefined) query = query.where("id", ">", after);
  return query.orderBy("id").limit(limit).execute();
};

export type SealedSecretRow = {
  id: string;
  project_id: string;
  encrypted_fields: string | null;
  encrypted_value: string | null;
  encrypted_comment: string | null;
  metadata: StoredSecretMetadata[];
};

/**
 * Sealed secret or version rows with their project, a page at a time in id order (a deleted folder's
 * versions are kept: their environment comes from the folder's recorded versions).
 */
export const sealedSecretRowsAfter = async (
  db: Database,
  table: "secrets" | "secret_versions",
  after: string | undefined,
  limit: number,
) =>
  (
    await sql<SealedSecretRow>`
      select s.id, e.project_id, s.encrypted_fields, s.encrypted_value, s.encrypted_comment, s.metadata
      from ${sql.table(table)} s
      left join secret_folders f on f.id = s.folder_id
      join environments e on e.id = coalesce(f.env_id,
        (select v.env_id from secret_folder_versions v where v.folder_id = s.folder_id limit 1))
      where ${after === undefined ? sql`true` : sql`s.id > ${after}::uuid`}
      order by s.id limit ${sql.lit(limit)}`.execute(db)
  ).rows;
