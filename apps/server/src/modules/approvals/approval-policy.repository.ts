import { sql } from "kysely";
import type { Database } from "../../db/database";
import type { Tx } from "../../db/transaction";
import type { PrincipalType } from "../authz/principals";

/**
 * What both kinds of approval policy store alike: their approvers and bypassers (one table for both
 * kinds) and their environments (a table per kind, of one shape).
 */

/** Change policies (writes to protected folders) and access policies (requests for temporary access). */
export type PolicyKind = "secret" | "access";
export type PrincipalRole = "approver" | "bypasser";
export type StoredPrincipal = { role: PrincipalRole; type: PrincipalType; id: string };

const policyColumn = (kind: PolicyKind) => (kind === "secret" ? "secret_policy_id" : "access_policy_id");

/** Approvers and bypassers of policies, in the order they were given. */
export const listPolicyPrincipals = (db: Database, kind: PolicyKind, policyIds: readonly string[]) =>
  policyIds.length === 0
    ? Promise.resolve([])
    : db
        .selectFrom("approval_policy_principals")
        .select([
          sql<string>`coalesce(secret_policy_id, access_policy_id)`.as("policy_id"),
          "role",
          "principal_type",
          sql<string>`coalesce(user_id, identity_id, group_id)`.as("principal_id"),
        ])
        .where(policyColumn(kind), "in", [...policyIds])
        .orderBy("position")
        .orderBy("id")
        .execute();
export type PolicyPrincipalRow = Awaited<ReturnType<typeof listPolicyPrincipals>>[number];

/** Replaces the policy's principals of the given roles; each role's are numbered in the order given. */
export const replacePolicyPrincipals = async (
  trx: Tx,
  kind: PolicyKind,
  policyId: string,
  roles: readonly PrincipalRole[],
  principals: readonly StoredPrincipal[],
) => {
  await trx
    .deleteFrom("approval_policy_principals")
    .where(policyColumn(kind), "=", policyId)
    .where("role", "in", [...roles])
    .execute();
  if (principals.length === 0) return;
  await trx
    .insertInto("approval_policy_principals")
    .values(
      principals.map((p) => ({
        secret_policy_id: kind === "secret" ? policyId : null,
        access_policy_id: kind === "access" ? policyId : null,
        role: p.role,
        principal_type: p.type,
        user_id: p.type === "user" ? p.id : null,
        identity_id: p.type === "identity" ? p.id : null,
        group_id: p.type === "group" ? p.id : null,
        position: principals.filter((q) => q.role === p.role).indexOf(p),
      })),
    )
    .onConflict((oc) => oc.doNothing())
    .execute();
};

// Both kinds' environment tables have one shape; the cast lets one statement serve either.
const ENVIRONMENT_TABLES = {
  secret: "secret_approval_policy_environments",
  access: "access_approval_policy_environments",
} as const;
const environmentTable = (kind: PolicyKind) => ENVIRONMENT_TABLES[kind] as (typeof ENVIRONMENT_TABLES)["secret"];

/** The environments of policies, with their slugs and names. */
export const listPolicyEnvironments = (db: Database, kind: PolicyKind, policyIds: readonly string[]) =>
  policyIds.length === 0
    ? Promise.resolve([])
    : db
        .selectFrom(`${environmentTable(kind)} as pe`)
        .innerJoin("environments as e", "e.id", "pe.env_id")
        .select(["pe.policy_id", "e.id", "e.slug", "e.name", "e.position"])
        .where("pe.policy_id", "in", [...policyIds])
        .orderBy("e.position")
        .orderBy("e.slug")
        .execute();

export const replacePolicyEnvironments = async (
  trx: Tx,
  kind: PolicyKind,
  policyId: string,
  envIds: readonly string[],
) => {
  await trx.deleteFrom(environmentTable(kind)).where("policy_id", "=", policyId).execute();
  if (envIds.length > 0)
    await trx
      .insertInto(environmentTable(kind))
      .values(envIds.map((env_id) => ({ policy_id: policyId, env_id })))
      .execute();
};

/** Environments of a project by slug. */
export const findEnvironmentsBySlugs = (db: Database, projectId: string, slugs: readonly string[]) =>
  slugs.length === 0
    ? Promise.resolve([])
    : db
        .selectFrom("environments")
        .select(["id", "slug", "name", "position"])
        .where("project_id", "=", projectId)
        .where("slug", "in", [...slugs])
        .execute();
