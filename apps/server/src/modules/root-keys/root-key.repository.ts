import { sql } from "kysely";
import type { Database } from "../../db/database";
import type { Tx } from "../../db/transaction";
import type { RootKeysTable } from "../../db/tables/root-keys";
import type { SealedTable } from "./sealed-columns";

/** Serialises every change of `root_keys` (creating version 1, a rotation's start, a seal change). */
const ROOT_KEYS_LOCK = 0x6b77_726b; // "kwrk"

export type RootKeyRow = Pick<RootKeysTable, "version" | "sealed" | "sealed_by" | "seal_fingerprint" | "state"> & {
  created_at: Date;
  retired_at: Date | null;
};

export const lockRootKeys = async (trx: Tx) => {
  await sql`select pg_advisory_xact_lock(${ROOT_KEYS_LOCK}::bigint)`.execute(trx);
};

/** Whether the schema has root keys at all (migration 0042 applied). */
export const hasRootKeys = async (db: Database) => {
  const { rows } = await sql<{ t: string | null }>`select to_regclass('root_keys')::text as t`.execute(db);
  return rows[0]?.t != null;
};

export const listRootKeys = (db: Database): Promise<RootKeyRow[]> =>
  db.selectFrom("root_keys").selectAll().orderBy("version").execute();

export const insertRootKey = (
  trx: Tx,
  row: { version: number; sealed: string; sealed_by: "SOFTWARE" | "HSM"; seal_fingerprint: string; state: "active" },
) => trx.insertInto("root_keys").values(row).execute();

export const markRootKey = (trx: Tx, version: number, state: "retiring") =>
  trx.updateTable("root_keys").set({ state }).where("version", "=", version).execute();

/** Re-seals a live version (a change of seal): the material is the same, only its wrapping changes. */
export const resealRootKey = (
  trx: Tx,
  version: number,
  sealed: { sealed: string; sealed_by: "SOFTWARE" | "HSM"; seal_fingerprint: string },
) => trx.updateTable("root_keys").set(sealed).where("version", "=", version).execute();

/** Locks the versions about to retire: writers sealing under them (their guard takes a share lock) finish first. */
export const lockRetiringVersions = (trx: Tx, below: number) =>
  trx
    .selectFrom("root_keys")
    .select("version")
    .where("version", "<", below)
    .where("state", "=", "retiring")
    .forUpdate()
    .execute();

export const retireVersions = (trx: Tx, versions: number[], at: Date) =>
  versions.length === 0
    ? Promise.resolve()
    : trx
        .updateTable("root_keys")
        .set({ state: "retired", sealed: null, retired_at: at })
        .where("version", "in", versions)
        .execute();

export const findInstanceSecret = (db: Database, name: string) =>
  db.selectFrom("instance_secrets").select("sealed").where("name", "=", name).executeTakeFirst();

export const insertInstanceSecret = (trx: Tx, name: string, sealed: string) =>
  trx
    .insertInto("instance_secrets")
    .values({ name, sealed })
    .onConflict((oc) => oc.column("name").doNothing())
    .execute();

export const databaseHasOrganizations = async (db: Database) =>
  (await db.selectFrom("organizations").select("id").limit(1).executeTakeFirst()) !== undefined;

/**
 * A root-sealed value not under `version` (and so to re-wrap): v1 forms and v2 forms of any other
 * version. Anything else in a registered column (a SCEP challenge's password hash) is not root-sealed.
 */
const notUnder = (column: string, version: number) =>
  sql`(${sql.ref(column)} like 'v1:%' or (${sql.ref(column)} like 'v2:%' and ${sql.ref(column)} not like ${`v2:${version}:%`}))`;

const anyNotUnder = (entry: SealedTable, version: number) =>
  sql.join(
    entry.columns.map((c) => notUnder(c.name, version)),
    sql` or `,
  );

/** A root-sealed value (v1 or v2 form) under another version than `version`; null and other forms are not. */
export const isStale = (value: string | null | undefined, version: number) =>
  !!value && (value.startsWith("v1:") || (value.startsWith("v2:") && !value.startsWith(`v2:${version}:`)));

/** Rows of one registered table holding a value not sealed under `version`. */
export const countNotUnder = async (db: Database | Tx, entry: SealedTable, version: number) => {
  const { rows } = await sql<{ n: string }>`select count(*)::text as n from ${sql.table(entry.table)}
    where ${anyNotUnder(entry, version)}`.execute(db);
  return Number(rows[0]?.n ?? 0);
};

/** A page of a registered table's rows after `after`: its key, the columns its contexts need and the sealed ones, as text. */
const sealedRowsPage = (entry: SealedTable, after: string | undefined, limit: number) => {
  const columns = [entry.key, ...(entry.extra ?? []), ...entry.columns.map((c) => c.name)];
  return sql<Record<string, string | null>>`select ${sql.join(
    columns.map((c) => sql`${sql.ref(c)}::text as ${sql.ref(c)}`),
  )} from ${sql.table(entry.table)}
    where ${after === undefined ? sql`true` : sql`${sql.ref(entry.key)} > ${after}`}
    order by ${sql.ref(entry.key)}
    limit ${limit}`;
};

/** A page of a registered table's rows, read (a restore's check that every value opens). */
export const sealedRowsAfter = async (db: Database, entry: SealedTable, after: string | undefined, limit: number) =>
  (await sealedRowsPage(entry, after, limit).execute(db)).rows;

/**
 * The next rows of a registered table after `after` (by its key), locked for the re-wrap; only rows
 * holding a value not yet under `version` are answered, but `last` is the last key looked at.
 */
export const lockBatchAfter = async (
  trx: Tx,
  entry: SealedTable,
  after: string | undefined,
  version: number,
  limit: number,
) => {
  const { rows } = await sql<Record<string, string | null>>`${sealedRowsPage(entry, after, limit)} for update`.execute(
    trx,
  );
  const last = rows.length > 0 ? (rows[rows.length - 1]![entry.key] as string) : undefined;
  return {
    rows: rows.filter((row) => entry.columns.some((c) => isStale(row[c.name], version))),
    last,
    full: rows.length === limit,
  };
};

/**
 * One statement for a batch: each row's registered columns set to the values given (every column, the
 * unchanged ones with what they held), joined on the key cast to its column's type so the key's index serves.
 */
export const updateSealedRows = async (
  trx: Tx,
  entry: SealedTable,
  rows: readonly { key: string; values: readonly (string | null)[] }[],
) => {
  if (rows.length === 0) return;
  const columns = entry.columns.map((c) => c.name);
  const tuples = rows.map((row) => sql`(${sql.join([row.key, ...row.values].map((value) => sql`${value}::text`))})`);
  await sql`update ${sql.table(entry.table)} as t set ${sql.join(
    columns.map((column) => sql`${sql.ref(column)} = v.${sql.ref(column)}`),
  )}
    from (values ${sql.join(tuples)}) as v(k, ${sql.join(columns.map((column) => sql.ref(column)))})
    where t.${sql.ref(entry.key)} = v.k::${sql.raw(entry.keyType ?? "uuid")}`.execute(trx);
};
