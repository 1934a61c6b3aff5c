import { sql, type Insertable, type Selectable, type Updateable } from "kysely";
import type { Database } from "../../../db/database";
import type { Tx } from "../../../db/transaction";
import type { Holder } from "../../authz/principals";
import type {
  AccessApprovalPoliciesTable,
  AccessApprovalRequestsTable,
  AccessApprovalReviewsTable,
} from "../../../db/tables/access-approvals";

export type PolicyRow = Selectable<AccessApprovalPoliciesTable>;
export type RequestRow = Selectable<AccessApprovalRequestsTable>;
export type ReviewRow = Selectable<AccessApprovalReviewsTable>;
/** A person or a machine identity: who asks, reviews or revokes. */
export type { Holder } from "../../authz/principals";

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

// ---- who is who ----

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
