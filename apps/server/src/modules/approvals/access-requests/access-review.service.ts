/** Access requests decided: reviews (with the grant on the last approval) and revocation. */
import { noteAudit, type RequestContext } from "../../../context";
import { isUniqueViolation, isUuid } from "../../../db/errors";
import type { Database } from "../../../db/database";
import { inTransaction } from "../../../db/transaction";
import { ForbiddenError, BadRequestError, NotFoundError } from "../../../errors";
import { toIso } from "../../../lib/dates";
import { missingPermissions, type Ability, type PermissionRule } from "../../../permissions";
import { assertWithinBoundary } from "../../authz/boundary";
import { bumpPermissionVersion } from "../../authz/permission-version";
import { groupIdsOf, sameHolder } from "../../authz/principals";
import { abilityOfMember, getProjectPermission } from "../../authz/project-access";
import { SECRET_MANAGER } from "../../folders/folder.service";
import {
  findDirectMembershipId,
  findPolicy,
  findRequest,
  insertReview,
  listReviews,
  lockRequest,
  updateRequestRow,
  type Holder,
  type RequestRow,
  type ReviewRow,
} from "./access-request.repository";
import { loadPolicyDetails, type PolicyDetails } from "./access-policy.service";
import { grantPrivilegeOfRequest, revokeGrantedPrivilege, windowFrom } from "./access-grants";
import {
  type Status,
  dtoOf,
  holderOf,
  isNamed,
  policyCoversPath,
  requestNotFound,
  requesterOf,
  statusOf,
  toReviewerDto,
} from "./access-request.service";

// ---- review ----

/** The request, the caller's ability in its project, its policy with approvers; 404 for another organization's. */
const requireRequest = async (ctx: RequestContext, id: string) => {
  const found = isUuid(id) ? await findRequest(ctx.deps.db, id) : undefined;
  if (!found || found.org_id !== ctx.actor.orgId) throw requestNotFound(id);
  const { org_id: _org, ...row } = found;
  const permission = await getProjectPermission(ctx, row.project_id, SECRET_MANAGER).catch((error: unknown) => {
    throw error instanceof NotFoundError ? requestNotFound(id) : error;
  });
  const policyRow = (await findPolicy(ctx.deps.db, row.policy_id))!;
  const policy = (await loadPolicyDetails(ctx, [policyRow])).get(policyRow.id)!;
  const me = holderOf(ctx);
  const groupIds = await groupIdsOf(ctx.deps.db, me);
  return { row, ability: permission.ability, policy, me, groupIds };
};

const CLOSED = "The request has been closed";

/** The rules still stand under the policy as it is now. */
const assertPolicyStillCovers = (row: RequestRow, policy: PolicyDetails) => {
  if (!policy.environments.some((e) => e.id === row.env_id))
    throw new BadRequestError(`The policy is no longer attached to environment '${row.env_slug}'.`);
  if (!policyCoversPath(policy.row, row.secret_path))
    throw new BadRequestError(`The policy no longer covers secret path '${row.secret_path}'.`);
};

/** Does the holder, as the project stands now, still hold the rules? Read fresh, inside the review's transaction. */
const holdsNow = async (
  deps: RequestContext["deps"],
  db: Database,
  projectId: string,
  holder: Holder,
  rules: PermissionRule[],
) => {
  const ability = await abilityOfMember(deps, projectId, holder, db);
  return ability !== undefined && missingPermissions(ability, rules).length === 0;
};

/**
 * Approvals that count: a bypass, or distinct approving reviewers who are still the policy's
 * approvers and still hold what the request grants (an approver whose rights were taken away since
 * no longer vouches for it). The caller is one of them, checked already.
 */
const countsAsApproved = async (
  deps: RequestContext["deps"],
  db: Database,
  row: RequestRow,
  policy: PolicyDetails,
  me: Holder,
  reviews: readonly ReviewRow[],
) => {
  if (reviews.some((r) => r.status === "approved" && r.bypass_reason !== null)) return true;
  const approvers = new Map<string, Holder>();
  for (const r of reviews) {
    if (r.status !== "approved") continue;
    const holder: Holder =
      r.reviewer_type === "user"
        ? { type: "user", id: r.reviewer_user_id! }
        : { type: "identity", id: r.reviewer_identity_id! };
    approvers.set(`${holder.type}:${holder.id}`, holder);
  }
  let counted = 0;
  for (const holder of approvers.values()) {
    if (
      sameHolder(holder, me) ||
      (isNamed(policy, "approvers", holder, await groupIdsOf(db, holder)) &&
        (await holdsNow(deps, db, row.project_id, holder, row.rules as PermissionRule[])))
    )
      counted += 1;
    if (counted >= policy.row.approvals) return true;
  }
  return false;
};

export const reviewAccessRequest = async (
  ctx: RequestContext,
  id: string,
  body: { status: "approved" | "rejected"; bypassReason?: string },
) => {
  const { row, ability, policy, me, groupIds } = await requireRequest(ctx, id);
  const bypass = body.bypassReason !== undefined;
  if (bypass) {
    const mayBypass =
      body.status === "approved" &&
      policy.row.enforcement_level === "soft" &&
      isNamed(policy, "bypassers", me, groupIds);
    if (!mayBypass) throw new ForbiddenError("You are not permitted to bypass approval on this request");
  } else if (!isNamed(policy, "approvers", me, groupIds)) {
    throw new ForbiddenError("You are not an approver of this request's policy");
  }
  if (sameHolder(requesterOf(row), me) && !policy.row.allowed_self_approvals)
    throw new ForbiddenError("You cannot review your own access request: the policy does not allow self-approval");
  // Nobody approves access they do not hold themselves.
  if (body.status === "approved")
    assertWithinBoundary(ability, row.rules as PermissionRule[], "Failed to approve the access request");
  if (policy.row.deleted_at !== null)
    throw new BadRequestError("The policy associated with this access request has been deleted.");
  const now = ctx.deps.clock.now();
  const status = statusOf(row, now);
  if (status === "expired") throw new BadRequestError("This access request has expired and can no longer be reviewed");
  if (status !== "pending") throw new BadRequestError(CLOSED);
  assertPolicyStillCovers(row, policy);

  try {
    return await inTransaction(ctx, async (trx) => {
      // The project row first (an approval grants a privilege), then the request: concurrent
      // reviews of one request count each other's approvals and grant once.
      await bumpPermissionVersion(trx, [row.project_id]);
      const locked = await lockRequest(trx, id);
      if (!locked || locked.status !== "pending") throw new BadRequestError(CLOSED);
      const review = await insertReview(trx, {
        request_id: id,
        reviewer_type: me.type,
        reviewer_user_id: me.type === "user" ? me.id : null,
        reviewer_identity_id: me.type === "identity" ? me.id : null,
        status: body.status,
        bypass_reason: body.bypassReason ?? null,
      });
      let outcome: Status = "pending";
      let privilegeId: string | undefined;
      if (body.status === "rejected") {
        await updateRequestRow(trx, id, { status: "rejected" });
        outcome = "rejected";
      } else if (await countsAsApproved(ctx.deps, trx, locked, policy, me, await listReviews(trx, [id]))) {
        const requester = requesterOf(locked);
        const membershipId = await findDirectMembershipId(trx, locked.project_id, requester);
        if (!membershipId) throw new BadRequestError("The requester is no longer a direct member of the project");
        const start = new Date(now);
        privilegeId = await grantPrivilegeOfRequest(
          trx,
          locked,
          membershipId,
          windowFrom(start, locked.temporary_range),
        );
        await updateRequestRow(trx, id, { status: "approved", approved_at: start });
        outcome = "approved";
      }
      noteAudit(ctx, {
        metadata: {
          requestId: id,
          reviewId: review.id,
          status: body.status,
          bypassed: bypass,
          requestStatus: outcome,
          ...(privilegeId ? { privilegeId } : {}),
        },
      });
      return {
        id: review.id,
        requestId: id,
        ...toReviewerDto(review),
        createdAt: toIso(review.created_at),
      };
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw new BadRequestError("You have already reviewed this request");
    throw error;
  }
};

// ---- revoke ----

/** The requester gives access up; an approver of the policy, or whoever may revoke grants, takes it away. */
const mayRevoke = (ability: Ability, row: RequestRow, policy: PolicyDetails, me: Holder, groupIds: string[]) =>
  sameHolder(requesterOf(row), me) ||
  isNamed(policy, "approvers", me, groupIds) ||
  ability.can("revoke", "approval-request-grants");

export const revokeAccessRequest = async (ctx: RequestContext, id: string) => {
  const { row, ability, policy, me, groupIds } = await requireRequest(ctx, id);
  if (!mayRevoke(ability, row, policy, me, groupIds))
    throw new ForbiddenError("You are not allowed to revoke this access request");
  if (row.status !== "approved") throw new BadRequestError("Only approved requests can be revoked");
  const revoked = await inTransaction(ctx, async (trx) => {
    await bumpPermissionVersion(trx, [row.project_id]);
    const locked = await lockRequest(trx, id);
    if (!locked || locked.status !== "approved") throw new BadRequestError("Only approved requests can be revoked");
    await revokeGrantedPrivilege(trx, locked);
    const revoked = await updateRequestRow(trx, id, {
      status: "revoked",
      revoked_at: new Date(ctx.deps.clock.now()),
      revoked_by_user_id: me.type === "user" ? me.id : null,
      revoked_by_identity_id: me.type === "identity" ? me.id : null,
    });
    noteAudit(ctx, { metadata: { requestId: id, policyId: row.policy_id } });
    return revoked;
  });
  return { ...(await dtoOf(ctx, revoked)), privilegeId: null };
};
