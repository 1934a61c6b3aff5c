import { sql, type Expression, type ExpressionBuilder, type SqlBool } from "kysely";
import type { DB } from "../../db/schema";
import { batchedLookup } from "../../db/batched-lookup";
import { compiledOnce } from "../../db/compiled-once";
import type { Database } from "../../db/database";

/**
 * Identity rows with what every response carries: its auth methods and metadata, aggregated in
 * the same query. Methods with an active login lockout join `activeLockoutAuthMethods`.
 */
export const selectIdentityDetails = (db: Database) =>
  db
    .selectFrom("identities as i")
    .select([
      "i.id",
      "i.name",
      "i.org_id",
      "i.project_id",
      "i.org_role",
      "i.has_delete_protection",
      "i.created_at",
      "i.updated_at",
      sql<
        string[]
      >`coalesce((select json_agg(c.method order by c.method) from identity_auth_configs c where c.identity_id = i.id), '[]'::json)`.as(
        "auth_methods",
      ),
      sql<
        string[]
      >`coalesce((select json_agg(distinct c.method) from identity_auth_lockouts l join identity_auth_configs c on c.id = l.auth_config_id where c.identity_id = i.id and l.locked_until > now()), '[]'::json)`.as(
        "active_lockout_auth_methods",
      ),
      sql<
        { id: string; key: string; value: string }[]
      >`coalesce((select json_agg(json_build_object('id', m.id, 'key', m.key, 'value', m.value) order by m.created_at, m.id) from identity_metadata m where m.identity_id = i.id), '[]'::json)`.as(
        "metadata",
      ),
    ]);

export type IdentityDetailsRow = Awaited<
  ReturnType<ReturnType<typeof selectIdentityDetails>["executeTakeFirstOrThrow"]>
>;

export const findIdentityDetails = (db: Database, identityId: string) =>
  selectIdentityDetails(db).where("i.id", "=", identityId).executeTakeFirst();

/** Identities by id (UUIDs only: one malformed id would fail the whole batch), compiled once. */
const identitiesDetails = compiledOnce((db, ids: string[]) =>
  selectIdentityDetails(db).where(sql<boolean>`i.id = any(${ids}::uuid[])`),
);
const identityDetails = batchedLookup(identitiesDetails, (row) => row.id);

/**
 * The read every identity GET makes, batched with the other identity reads of the same
 * event-loop turn; another organization's identity is not found.
 */
export const findIdentityDetailsInOrg = async (db: Database, identityId: string, orgId: string) => {
  const row = await identityDetails(db, identityId);
  return row?.org_id === orgId ? row : undefined;
};

/** `projectId`: null for the organization's own identities, a project's id for its; `anyProject`: both. */
type IdentityFilter = { orgId: string; projectId: string | null; anyProject?: boolean; search?: string };

const escapeLike = (value: string) => `%${value.replace(/[\\%_]/g, "\\$&")}%`;

/** Org identities (projectId null), one project's identities, or all of the org's, optionally by name. */
const identityFilter = (f: IdentityFilter) => (eb: ExpressionBuilder<DB & { i: DB["identities"] }, "i">) => {
  const clauses: Expression<SqlBool>[] = [eb("i.org_id", "=", f.orgId)];
  if (!f.anyProject)
    clauses.push(f.projectId === null ? eb("i.project_id", "is", null) : eb("i.project_id", "=", f.projectId));
  if (f.search) clauses.push(eb("i.name", "ilike", escapeLike(f.search)));
  return eb.and(clauses);
};

export const listIdentityDetails = async (db: Database, filter: IdentityFilter & { offset: number; limit: number }) => {
  const [rows, count] = await Promise.all([
    selectIdentityDetails(db)
      .where(identityFilter(filter))
      .orderBy("i.created_at")
      .orderBy("i.id")
      .offset(filter.offset)
      .limit(filter.limit)
      .execute(),
    db
      .selectFrom("identities as i")
      .select((eb) => eb.fn.countAll<string>().as("count"))
      .where(identityFilter(filter))
      .executeTakeFirstOrThrow(),
  ]);
  return { rows, totalCount: Number(count.count) };
};

/** The identity row used by authorization decisions; scoped to an organization. */
export const insertIdentity = (
  db: Database,
  values: { org_id: string; project_id: string | null; name: string; org_role: string; has_delete_protection: boolean },
) => db.insertInto("identities").values(values).returning("id").executeTakeFirstOrThrow();

export const replaceIdentityMetadata = async (
  db: Database,
  identityId: string,
  metadata: { key: string; value: string }[],
) => {
  await db.deleteFrom("identity_metadata").where("identity_id", "=", identityId).execute();
  if (metadata.length > 0) {
    await db
      .insertInto("identity_metadata")
      .values(metadata.map((m) => ({ identity_id: identityId, key: m.key, value: m.value })))
      .execute();
  }
};

export const updateIdentityRow = (
  db: Database,
  identityId: string,
  values: { name?: string; org_role?: string; has_delete_protection?: boolean },
) =>
  db
    .updateTable("identities")
    .set({ ...values, updated_at: new Date() })
    .where("id", "=", identityId)
    .execute();

export const deleteIdentityRow = (db: Database, identityId: string) =>
  db.deleteFrom("identities").where("id", "=", identityId).execute();
