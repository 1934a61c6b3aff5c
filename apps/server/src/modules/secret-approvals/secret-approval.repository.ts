import { sql } from "kysely";
import type { Database } from "../../db/database";
import type { Tx } from "../../db/transaction";

export type PrincipalType = "user" | "group" | "identity";
export type PrincipalRole = "approver" | "bypasser";
export type StoredPrincipal = { role: PrincipalRole; type: PrincipalType; id: string };

export const findEnvironmentsBySlugs = (db: Database, projectId: string, slugs: readonly string[]) =>
  db
    .selectFrom("environments")
    .select(["id", "slug", "name", "position"])
    .where("project_id", "=", projectId)
    .where("slug", "in", [...slugs])
    .execute();

/** Of the principals named, those that are members of the project (a group through its project membership). */
export const findProjectMembers = async (
  db: Database,
  projectId: string,
  principals: { type: PrincipalType; id: string }[],
) => {
  const ids = (type: PrincipalType) => principals.filter((p) => p.type === type).map((p) => p.id);
  const [users, identities, groups] = [ids("user"), ids("identity"), ids("group")];
  const found = new Set<string>();
  if (users.length > 0)
    for (const r of await db
      .selectFrom("project_user_memberships")
      .select("user_id as id")
      .where("project_id", "=", projectId)
      .where("user_id", "in", users)
      .execute())
      found.add(`user:${r.id}`);
  if (identities.length > 0)
    for (const r of await db
      .selectFrom("identity_project_memberships")
      .select("identity_id as id")
      .where("project_id", "=", projectId)
      .where("identity_id", "in", identities)
      .execute())
      found.add(`identity:${r.id}`);
  if (groups.length > 0)
    for (const r of await db
      .selectFrom("group_project_memberships")
      .select("group_id as id")
      .where("project_id", "=", projectId)
      .where("group_id", "in", groups)
      .execute())
      found.add(`group:${r.id}`);
  return found;
};

/** People of an organization by user name (or e-mail). */
export const findOrgUsersByUsername = (db: Database, orgId: string, usernames: readonly string[]) =>
  db
    .selectFrom("org_user_memberships as om")
    .innerJoin("users as u", "u.id", "om.user_id")
    .select(["u.id", "u.username", "u.email"])
    .where("om.org_id", "=", orgId)
    .where((eb) => eb.or([eb("u.username", "in", [...usernames]), eb("u.email", "in", [...usernames])]))
    .execute();

/** The groups an actor belongs to (people and identities both join groups). */
export const findGroupIdsOf = async (db: Database, actor: { type: "user" | "identity"; id: string }) =>
  (actor.type === "user"
    ? await db.selectFrom("group_user_members").select("group_id").where("user_id", "=", actor.id).execute()
    : await db.selectFrom("group_identity_members").select("group_id").where("identity_id", "=", actor.id).execute()
  ).map((r) => r.group_id);

// ---------------------------------------------------------------------------------------------
// Policies

const POLICY_COLUMNS = [
  "id",
  "project_id",
  "name",
  "secret_path",
  "approvals",
  "enforcement_level",
  "allowed_self_approvals",
  "bypass_for_machine_identities",
  "deleted_at",
  "created_at",
  "updated_at",
] as const;

export const findPolicy = (db: Database, policyId: string) =>
  db.selectFrom("secret_approval_policies").select(POLICY_COLUMNS).where("id", "=", policyId).executeTakeFirst();
export type PolicyRow = NonNullable<Awaited<ReturnType<typeof findPolicy>>>;

export const lockPolicy = (trx: Tx, policyId: string) =>
  trx
    .selectFrom("secret_approval_policies")
    .select(POLICY_COLUMNS)
    .where("id", "=", policyId)
    .forUpdate()
    .executeTakeFirst();

export const listLivePolicies = (db: Database, projectId: string) =>
  db
    .selectFrom("secret_approval_policies")
    .select(POLICY_COLUMNS)
    .where("project_id", "=", projectId)
    .where("deleted_at", "is", null)
    .orderBy("created_at")
    .orderBy("id")
    .execute();

/** Live policies attached to an environment, oldest first. */
export const listLivePoliciesOfEnvironment = (db: Database, projectId: string, environment: string) =>
  db
    .selectFrom("secret_approval_policies as p")
    .innerJoin("secret_approval_policy_environments as pe", "pe.policy_id", "p.id")
    .innerJoin("environments as e", "e.id", "pe.env_id")
    .select(POLICY_COLUMNS.map((c) => `p.${c}` as const))
    .where("p.project_id", "=", projectId)
    .where("e.slug", "=", environment)
    .where("p.deleted_at", "is", null)
    .orderBy("p.created_at")
    .orderBy("p.id")
    .execute();

/** Every policy of a project, retired ones too (their requests still list). */
export const listProjectPolicyIds = (db: Database, projectId: string) =>
  db.selectFrom("secret_approval_policies").select("id").where("project_id", "=", projectId).execute();

export const listPolicyEnvironments = (db: Database, policyIds: readonly string[]) =>
  policyIds.length === 0
    ? Promise.resolve([])
    : db
        .selectFrom("secret_approval_policy_environments as pe")
        .innerJoin("environments as e", "e.id", "pe.env_id")
        .select(["pe.policy_id", "e.id", "e.slug", "e.name", "e.position"])
        .where("pe.policy_id", "in", [...policyIds])
        .orderBy("e.position")
        .execute();

export const listPolicyPrincipals = (db: Database, policyIds: readonly string[]) =>
  policyIds.length === 0
    ? Promise.resolve([])
    : db
        .selectFrom("secret_approval_policy_principals")
        .select(["policy_id", "role", "principal_type", "principal_id"])
        .where("policy_id", "in", [...policyIds])
        .execute();

/** Display names of the principals: a person's user name, a group's or an identity's name. */
export const findPrincipalNames = async (db: Database, principals: readonly { type: string; id: string }[]) => {
  const ids = (type: string) => [...new Set(principals.filter((p) => p.type === type).map((p) => p.id))];
  const names = new Map<string, string>();
  const [users, groups, identities] = [ids("user"), ids("group"), ids("identity")];
  if (users.length > 0)
    for (const r of await db.selectFrom("users").select(["id", "username"]).where("id", "in", users).execute())
      names.set(`user:${r.id}`, r.username);
  if (groups.length > 0)
    for (const r of await db.selectFrom("groups").select(["id", "name"]).where("id", "in", groups).execute())
      names.set(`group:${r.id}`, r.name);
  if (identities.length > 0)
    for (const r of await db.selectFrom("identities").select(["id", "name"]).where("id", "in", identities).execute())
      names.set(`identity:${r.id}`, r.name);
  return names;
};

export type PolicyValues = {
  name: string;
  secret_path: string;
  approvals: number;
  enforcement_level: string;
  allowed_self_approvals: boolean;
  bypass_for_machine_identities: boolean;
};

export const insertPolicy = (trx: Tx, projectId: string, values: PolicyValues) =>
  trx
    .insertInto("secret_approval_policies")
    .values({ project_id: projectId, ...values })
    .returning(POLICY_COLUMNS)
    .executeTakeFirstOrThrow();

export const updatePolicyRow = (trx: Tx, policyId: string, values: Partial<PolicyValues>) =>
  trx
    .updateTable("secret_approval_policies")
    .set({ ...values, updated_at: sql`now()` })
    .where("id", "=", policyId)
    .returning(POLICY_COLUMNS)
    .executeTakeFirstOrThrow();

export const retirePolicyRow = (trx: Tx, policyId: string) =>
  trx
    .updateTable("secret_approval_policies")
    .set({ deleted_at: sql`now()`, updated_at: sql`now()` })
    .where("id", "=", policyId)
    .returning(POLICY_COLUMNS)
    .executeTakeFirstOrThrow();

export const replacePolicyEnvironments = async (trx: Tx, policyId: string, envIds: readonly string[]) => {
  await trx.deleteFrom("secret_approval_policy_environments").where("policy_id", "=", policyId).execute();
  await trx
    .insertInto("secret_approval_policy_environments")
    .values(envIds.map((env_id) => ({ policy_id: policyId, env_id })))
    .execute();
};

export const replacePolicyPrincipals = async (
  trx: Tx,
  policyId: string,
  roles: readonly PrincipalRole[],
  principals: readonly StoredPrincipal[],
) => {
  await trx
    .deleteFrom("secret_approval_policy_principals")
    .where("policy_id", "=", policyId)
    .where("role", "in", [...roles])
    .execute();
  if (principals.length === 0) return;
  await trx
    .insertInto("secret_approval_policy_principals")
    .values(principals.map((p) => ({ policy_id: policyId, role: p.role, principal_type: p.type, principal_id: p.id })))
    .onConflict((oc) => oc.doNothing())
    .execute();
};

/** Another live policy of the same environments and path. */
export const findPolicyWithScope = (
  db: Database,
  projectId: string,
  envIds: readonly string[],
  secretPath: string,
  exceptId?: string,
) => {
  let query = db
    .selectFrom("secret_approval_policies as p")
    .innerJoin("secret_approval_policy_environments as pe", "pe.policy_id", "p.id")
    .innerJoin("environments as e", "e.id", "pe.env_id")
    .select(["p.id", "e.slug"])
    .where("p.project_id", "=", projectId)
    .where("p.deleted_at", "is", null)
    .where("p.secret_path", "=", secretPath)
    .where("pe.env_id", "in", [...envIds]);
  if (exceptId !== undefined) query = query.where("p.id", "!=", exceptId);
  return query.executeTakeFirst();
};
