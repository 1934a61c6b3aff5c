import { sql, type Insertable, type SelectExpression, type UpdateObject } from "kysely";
import type { Database } from "../../../db/database";
import type { DB } from "../../../db/schema";

/** Each method's own row lives in one of these tables, keyed by its `identity_auth_configs` id. */
export type MethodTable =
  | "identity_universal_auths"
  | "identity_ldap_auths"
  | "identity_kubernetes_auths"
  | "identity_oidc_auths"
  | "identity_gcp_auths"
  | "identity_jwt_auths"
  | "identity_aws_auths"
  | "identity_azure_auths";

/** The common settings a login reads with the method's row (`identity_auth_configs as c`). */
export const LOGIN_CONFIG_COLUMNS = [
  "c.id",
  "c.identity_id",
  "c.method",
  "c.access_token_ttl",
  "c.access_token_max_ttl",
  "c.access_token_num_uses_limit",
  "c.access_token_period",
] as const;

/**
 * Kysely cannot type a query over a generic table name (kysely#1427), so the helpers query the
 * table under a stand-in `$` that has exactly its columns. The SQL names the real table (no alias),
 * and callers still get rows typed by the columns they list.
 */
type Own<T extends MethodTable> = { $: DB[T] };
type Column<T extends MethodTable> = SelectExpression<Own<T>, "$">;

const own = <T extends MethodTable>(db: Database, table: T) => ({
  db: db.withTables<Own<T>>(),
  table: table as string as "$",
});
const configIdRef = sql.ref<string>("auth_config_id");

export const findMethodRow = <T extends MethodTable, C extends Column<T>>(
  db: Database,
  table: T,
  columns: readonly C[],
  configId: string,
) => {
  const q = own(db, table);
  return q.db.selectFrom(q.table).select(columns).where(configIdRef, "=", configId).executeTakeFirstOrThrow();
};

export const insertMethodRow = <T extends MethodTable, C extends Column<T>>(
  db: Database,
  table: T,
  values: Insertable<DB[T]>,
  columns: readonly C[],
) => {
  const q = own(db, table);
  return q.db.insertInto(q.table).values(values).returning(columns).executeTakeFirstOrThrow();
};

/**
 * A partial update: Kysely leaves out undefined values, and with nothing left to set (it cannot run
 * an empty SET) the stored row is the answer.
 */
export const updateMethodRow = <T extends MethodTable, C extends Column<T>>(
  db: Database,
  table: T,
  configId: string,
  values: UpdateObject<DB & Own<T>, "$">,
  columns: readonly C[],
) => {
  if (Object.values(values).every((value) => value === undefined)) return findMethodRow(db, table, columns, configId);
  const q = own(db, table);
  return q.db
    .updateTable(q.table)
    .set(values)
    .where(configIdRef, "=", configId)
    .returning(columns)
    .executeTakeFirstOrThrow();
};

/**
 * A method's own table as its definition uses it: the public columns, and the sealed ones that only
 * readers which open them select. Writes answer with every column, so the answer can open them.
 */
export const methodTable = <T extends MethodTable, C extends Column<T>, S extends Column<T> = never>(
  table: T,
  columns: readonly C[],
  secretColumns: readonly S[] = [],
) => {
  const all: readonly (C | S)[] = [...columns, ...secretColumns];
  return {
    find: (db: Database, configId: string) => findMethodRow(db, table, columns, configId),
    findWithSecrets: (db: Database, configId: string) => findMethodRow(db, table, all, configId),
    insert: (db: Database, configId: string, values: Omit<Insertable<DB[T]>, "auth_config_id">) =>
      insertMethodRow(db, table, { ...values, auth_config_id: configId } as unknown as Insertable<DB[T]>, all),
    update: (db: Database, configId: string, values: UpdateObject<DB & Own<T>, "$">) =>
      updateMethodRow(db, table, configId, values, all),
  };
};

/** A JSON column on write: undefined leaves it as it is, null clears it. */
export const toJson = <V extends object | null | undefined>(value: V) =>
  (value === undefined ? undefined : value === null ? null : JSON.stringify(value)) as
    string | (null extends V ? null : never) | (undefined extends V ? undefined : never);

/** For a method with no row of its own (Token Auth): every read and write of it is nothing. */
export const noMethodRows = {
  find: () => Promise.resolve(undefined),
  findWithSecrets: () => Promise.resolve(undefined),
  insert: () => Promise.resolve(undefined),
  update: () => Promise.resolve(undefined),
};
