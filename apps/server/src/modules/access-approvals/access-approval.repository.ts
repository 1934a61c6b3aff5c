import { sql, type Insertable, type Selectable, type Updateable } from "kysely";
import type { Database } from "../../db/database";
import type { Tx } from "../../db/transaction";
import type {
  AccessApprovalPoliciesTable,
  AccessApprovalRequestsTable,
  AccessApprovalReviewsTable,
} from "../../db/tables/access-approvals";

export type PolicyRow = Selectable<AccessApprovalPoliciesTable>;
export type RequestRow = Selectable<AccessApprovalRequestsTable>;
export type ReviewRow = Selectable<AccessApprovalReviewsTable>;
export type PrincipalType = "user" | "identity" | "group";
export type PrincipalRole = "approver" | "bypasser";
export type StoredPrincipal = { role: PrincipalRole; type: PrincipalType; id: string };
/** A person or a machine identity: who asks, reviews or revokes. */
export type Holder = { type: "user" | "identity"; id: string };

// ---- policies ----

/** The policy with its project's organization: the caller checks it is theirs. */
export const findPolicy = (db: Database, id: string) =>
  db
    .selectFrom("access_approval_policies as a")
    .innerJoin("projects as p", "p.id", "a.project_id")
    .selectAll("a")
    .select("p.org_id")
    .where("a.id", "=", id)
    .executeTakeFirst();

export const lockPolicy = (trx: Tx, id: string) =>
  trx.selectFrom("access_approval_policies").selectAll().where("id", "=", id).forUpdate().executeTakeFirst();

export const listLivePolicies = (db: Database, projectId: string) =>
  db
    .selectFrom("access_approval_policies")
    .selectAll()
    .where("project_id", "=", projectId)
    .where("deleted_at", "is", null)
    .orderBy("created_at")
    .orderBy("id")
    .execute();

/** Live policies that name the environment. */
export const listLivePoliciesOfEnv = (db: Database, projectId: string, envId: string) =>
  db
    .selectFrom("access_approval_policies as a")
    .innerJoin("access_approval_policy_environments as e", "e.policy_id", "a.id")
    .selectAll("a")
    .where("a.project_id", "=", projectId)
    .where("e.env_id", "=", envId)
    .where("a.deleted_at", "is", null)
    .orderBy("a.created_at")
    .orderBy("a.id")
    .execute();

export const insertPolicy = (trx: Tx, values: Insertable<AccessApprovalPoliciesTable>) =>
  trx.insertInto("access_approval_policies").values(values).returningAll().executeTakeFirstOrThrow();

export const updatePolicyRow = (trx: Tx, id: string, values: Updateable<AccessApprovalPoliciesTable>) =>
  trx
    .updateTable("access_approval_policies")
    .set({ ...values, updated_at: sql`now()` })
    .where("id", "=", id)
    .returningAll()
    .executeTakeFirstOrThrow();

export const setPolicyEnvironments = async (trx: Tx, policyId: string, envIds: readonly string[]) => {
  await trx.deleteFrom("access_approval_policy_environments").where("policy_id", "=", policyId).execute();
  if (envIds.length > 0)
    await trx
      .insertInto("access_approval_policy_environments")
      .values(envIds.map((env_id) => ({ policy_id: policyId, env_id })))
      .execute();
};

export const setPolicyPrincipals = async (
  trx: Tx,
  policyId: string,
  role: PrincipalRole,
  principals: readonly { type: PrincipalType; id: string }[],
) => {
  await trx
    .deleteFrom("access_approval_policy_principals")
    .where("policy_id", "=", policyId)
    .where("role", "=", role)
    .execute();
  if (principals.length > 0)
    await trx
      .insertInto("access_approval_policy_principals")
      .values(
        principals.map((p, position) => ({
          policy_id: policyId,
          position,
          role,
          principal_type: p.type,
          user_id: p.type === "user" ? p.id : null,
          identity_id: p.type === "identity" ? p.id : null,
          group_id: p.type === "group" ? p.id : null,
        })),
      )
      .execute();
};

/** The environments of policies, with their slugs and names. */
export const listPolicyEnvironments = (db: Database, policyIds: readonly string[]) =>
  policyIds.length === 0
    ? Promise.resolve([])
    : db
        .selectFrom("access_approval_policy_environments as pe")
        .innerJoin("environments as e", "e.id", "pe.env_id")
        .select(["pe.policy_id", "e.id", "e.slug", "e.name", "e.position"])
        .where("pe.policy_id", "in", [...policyIds])
        .orderBy("e.position")
        .orderBy("e.slug")
        .execute();

/** Approvers and bypassers of policies, with a display name each. */
export const listPolicyPrincipals = (db: Database, policyIds: readonly string[]) =>
  policyIds.length === 0
    ? Promise.resolve([])
    : db
        .selectFrom("access_approval_policy_principals as pp")
        .leftJoin("users as u", "u.id", "pp.user_id")
        .leftJoin("identities as i", "i.id", "pp.identity_id")
        .leftJoin("groups as g", "g.id", "pp.group_id")
        .select([
          "pp.policy_id",
          "pp.role",
          "pp.principal_type",
          "pp.user_id",
          "pp.identity_id",
          "pp.group_id",
          "u.username",
          "i.name as identity_name",
          "g.slug as group_slug",
        ])
        .where("pp.policy_id", "in", [...policyIds])
        .orderBy("pp.position")
        .orderBy("pp.id")
        .execute();

/** Environments of a project by slug. */
export const findEnvironmentsBySlugs = (db: Database, projectId: string, slugs: readonly string[]) =>
  db
    .selectFrom("environments")
    .select(["id", "slug", "name"])
    .where("project_id", "=", projectId)
    .where("slug", "in", [...slugs])
    .execute();

// ---- who is who ----

/** People of the organization by username. */
export const findOrgUserIdsByUsernames = (db: Database, orgId: string, usernames: readonly string[]) =>
  usernames.length === 0
    ? Promise.resolve([])
    : db
        .selectFrom("org_user_memberships as om")
        .innerJoin("users as u", "u.id", "om.user_id")
        .select(["u.id", "u.username"])
        .where("om.org_id", "=", orgId)
        .where("u.username", "in", [...usernames])
        .execute();

/** Which of the given people, identities and groups are in the project (directly or by a group). */
export const findProjectPrincipals = async (
  db: Database,
  projectId: string,
  ids: { user: string[]; identity: string[]; group: string[] },
) => {
  const users =
    ids.user.length === 0
      ? []
      : await db
          .selectFrom("project_user_memberships")
          .select("user_id as id")
          .where("project_id", "=", projectId)
          .where("user_id", "in", ids.user)
          .union(
            db
              .selectFrom("group_user_members as gm")
              .innerJoin("group_project_memberships as gpm", "gpm.group_id", "gm.group_id")
              .select("gm.user_id as id")
              .where("gpm.project_id", "=", projectId)
              .where("gm.user_id", "in", ids.user),
          )
          .execute();
  const identities =
    ids.identity.length === 0
      ? []
      : await db
          .selectFrom("identity_project_memberships")
          .select("identity_id as id")
          .where("project_id", "=", projectId)
          .where("identity_id", "in", ids.identity)
          .union(
            db
              .selectFrom("group_identity_members as gm")
              .innerJoin("group_project_memberships as gpm", "gpm.group_id", "gm.group_id")
              .select("gm.identity_id as id")
              .where("gpm.project_id", "=", projectId)
              .where("gm.identity_id", "in", ids.identity),
          )
          .execute();
  const groups =
    ids.group.length === 0
      ? []
      : await db
          .selectFrom("group_project_memberships")
          .select("group_id as id")
          .where("project_id", "=", projectId)
          .where("group_id", "in", ids.group)
          .execute();
  return {
    user: new Set(users.map((r) => r.id)),
    identity: new Set(identities.map((r) => r.id)),
    group: new Set(groups.map((r) => r.id)),
  };
};

/** The groups a person or an identity belongs to. */
export const findGroupIdsOf = async (db: Database, holder: Holder) =>
  (holder.type === "user"
    ? await db.selectFrom("group_user_members").select("group_id").where("user_id", "=", holder.id).execute()
    : await db.selectFrom("group_identity_members").select("group_id").where("identity_id", "=", holder.id).execute()
  ).map((r) => r.group_id);

/** The holder's direct project membership, which a privilege hangs off. */
export const findDirectMembershipId = async (db: Database, projectId: string, holder: Holder) =>
  (holder.type === "user"
    ? await db
        .selectFrom("project_user_memberships")
        .select("id")
        .where("project_id", "=", projectId)
        .where("user_id", "=", holder.id)
        .executeTakeFirst()
    : await db
        .selectFrom("identity_project_memberships")
        .select("id")
        .where("project_id", "=", projectId)
        .where("identity_id", "=", holder.id)
        .executeTakeFirst()
  )?.id;

/** Whose direct membership of the project an id is, if any. */
export const findMembershipHolder = async (
  db: Database,
  projectId: string,
  membershipId: string,
): Promise<Holder | undefined> => {
  const user = await db
    .selectFrom("project_user_memberships")
    .select("user_id")
    .where("id", "=", membershipId)
    .where("project_id", "=", projectId)
    .executeTakeFirst();
  if (user) return { type: "user", id: user.user_id };
  const identity = await db
    .selectFrom("identity_project_memberships")
    .select("identity_id")
    .where("id", "=", membershipId)
    .where("project_id", "=", projectId)
    .executeTakeFirst();
  return identity ? { type: "identity", id: identity.identity_id } : undefined;
};

export const findPeople = (db: Database, ids: readonly string[]) =>
  ids.length === 0
    ? Promise.resolve([])
    : db
        .selectFrom("users")
        .select(["id", "email", "username", "first_name", "last_name"])
        .where("id", "in", [...ids])
        .execute();

export const findIdentities = (db: Database, ids: readonly string[]) =>
  ids.length === 0
    ? Promise.resolve([])
    : db
        .selectFrom("identities")
        .select(["id", "name"])
        .where("id", "in", [...ids])
        .execute();

// ---- requests ----

const requestsInOrg = (db: Database) =>
  db
    .selectFrom("access_approval_requests as r")
    .innerJoin("projects as p", "p.id", "r.project_id")
    .selectAll("r")
    .select("p.org_id");

export const findRequest = (db: Database, id: string) => requestsInOrg(db).where("r.id", "=", id).executeTakeFirst();

export const lockRequest = (trx: Tx, id: string) =>
  trx.selectFrom("access_approval_requests").selectAll().where("id", "=", id).forUpdate().executeTakeFirst();

export const listRequests = (
  db: Database,
  projectId: string,
  filter: { requester?: Holder; envSlug?: string; policyId?: string; status?: string },
) => {
  let query = db.selectFrom("access_approval_requests").selectAll().where("project_id", "=", projectId);
  if (filter.requester)
    query = query.where(
      filter.requester.type === "user" ? "requested_by_user_id" : "requested_by_identity_id",
      "=",
      filter.requester.id,
    );
  if (filter.envSlug) query = query.where("env_slug", "=", filter.envSlug);
  if (filter.policyId) query = query.where("policy_id", "=", filter.policyId);
  if (filter.status) query = query.where("status", "=", filter.status);
  return query.orderBy("created_at", "desc").orderBy("id").execute();
};

/** A pending request of the same requester for the same rules under the policy. */
export const findPendingTwin = (trx: Tx, policyId: string, requester: Holder, rulesJson: string) =>
  trx
    .selectFrom("access_approval_requests")
    .select(["id", "expires_at"])
    .where("policy_id", "=", policyId)
    .where("status", "=", "pending")
    .where(requester.type === "user" ? "requested_by_user_id" : "requested_by_identity_id", "=", requester.id)
    .where(sql<boolean>`rules = ${rulesJson}::jsonb`)
    .execute();

export const insertRequest = (trx: Tx, values: Insertable<AccessApprovalRequestsTable>) =>
  trx.insertInto("access_approval_requests").values(values).returningAll().executeTakeFirstOrThrow();

export const updateRequestRow = (trx: Tx, id: string, values: Updateable<AccessApprovalRequestsTable>) =>
  trx
    .updateTable("access_approval_requests")
    .set({ ...values, updated_at: sql`now()` })
    .where("id", "=", id)
    .returningAll()
    .executeTakeFirstOrThrow();

// ---- reviews ----

export const listReviews = (db: Database, requestIds: readonly string[]) =>
  requestIds.length === 0
    ? Promise.resolve([])
    : db
        .selectFrom("access_approval_reviews")
        .selectAll()
        .where("request_id", "in", [...requestIds])
        .orderBy("created_at")
        .orderBy("id")
        .execute();

export const insertReview = (trx: Tx, values: Insertable<AccessApprovalReviewsTable>) =>
  trx.insertInto("access_approval_reviews").values(values).returningAll().executeTakeFirstOrThrow();
