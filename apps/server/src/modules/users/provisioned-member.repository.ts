import { sql } from "kysely";
import type { Database } from "../../db/database";
import type { Tx } from "../../db/transaction";
import { memberFirstName, memberLastName } from "./org-membership.repository";

/**
 * An organization's members as its provisioning (SCIM) client sees them: accepted memberships, the
 * names the organization gave them, and the provider's userName kept as an alias.
 */

/** What SCIM filters members by: `eq` on one attribute, compared case-insensitively. */
export type MemberFilter = { attribute: "userName" | "externalId" | "email" | "displayName"; value: string };

const scimMembers = (db: Database | Tx, orgId: string) =>
  db
    .selectFrom("org_user_memberships as om")
    .innerJoin("users as u", "u.id", "om.user_id")
    .where("om.org_id", "=", orgId)
    .where("om.status", "=", "accepted");

/** The member's latest alias of this type: the provider's userName. */
const latestAlias = (orgId: string, aliasType: string) =>
  sql<string | null>`(select a.external_id from user_aliases a where a.user_id = u.id and a.org_id = ${orgId}
    and a.alias_type = ${aliasType} order by a.created_at desc limit 1)`.as("external_id");

const memberFilterSql = (aliasType: string, orgId: string, filter: MemberFilter) => {
  const value = filter.value.toLowerCase();
  const aliasMatch = sql<boolean>`exists (select 1 from user_aliases a where a.user_id = u.id and a.org_id = ${orgId}
    and a.alias_type = ${aliasType} and lower(a.external_id) = ${value})`;
  switch (filter.attribute) {
    case "userName":
      return sql<boolean>`(${aliasMatch} or lower(u.email) = ${value})`;
    case "externalId":
      return aliasMatch;
    case "email":
      return sql<boolean>`lower(u.email) = ${value}`;
    case "displayName":
      return sql<boolean>`lower(trim(coalesce(om.first_name, u.first_name) || ' ' || coalesce(om.last_name, u.last_name))) = ${value}`;
  }
};

/** An organization's accepted members as a provisioning client pages through them, with the full count. */
export const pageProvisionedMembers = async (
  db: Database,
  orgId: string,
  aliasType: string,
  query: { filter?: MemberFilter; offset: number; limit: number },
) => {
  const base = scimMembers(db, orgId).$if(query.filter !== undefined, (qb) =>
    qb.where(memberFilterSql(aliasType, orgId, query.filter!)),
  );
  const [rows, count] = await Promise.all([
    base
      .select(PROVISIONED_COLUMNS)
      .select(latestAlias(orgId, aliasType))
      .orderBy("om.created_at")
      .orderBy("om.id")
      .offset(query.offset)
      .limit(query.limit)
      .execute(),
    base.select((eb) => eb.fn.countAll<string>().as("count")).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(count.count) };
};

const PROVISIONED_COLUMNS = [
  "om.id",
  "om.user_id",
  "om.is_active",
  "u.email",
  memberFirstName,
  memberLastName,
] as const;

export const findProvisionedMember = (db: Database | Tx, orgId: string, aliasType: string, membershipId: string) =>
  scimMembers(db, orgId)
    .select(PROVISIONED_COLUMNS)
    .select(latestAlias(orgId, aliasType))
    .where("om.id", "=", membershipId)
    .executeTakeFirst();

export type ProvisionedMemberRow = NonNullable<Awaited<ReturnType<typeof findProvisionedMember>>>;
