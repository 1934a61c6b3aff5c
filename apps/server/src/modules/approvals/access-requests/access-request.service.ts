import {
  parseDuration,
  type AccessRequest,
  type AccessRequestPermission,
  type LegacyPermission,
} from "@keyward/contract";
import { noteAudit, type RequestContext } from "../../../context";
import { isUuid } from "../../../db/errors";
import { inTransaction } from "../../../db/transaction";
import { BadRequestError, NotFoundError } from "../../../errors";
import { toIso } from "../../../lib/dates";
import { isGlobSubsetOfGlob, missingPermissions } from "../../../permissions";
import { groupIdsOf, isAmong, sameHolder } from "../../authz/principals";
import { getProjectPermissionBySlug } from "../../authz/project-access";
import { SECRET_MANAGER, lookupEnvironmentBySlug } from "../../folders/folder.service";
import { expandLegacyPermissions } from "../../privileges/legacy-permissions";
import {
  findDirectMembershipId,
  findIdentities,
  findMembershipHolder,
  findPeople,
  findPendingTwin,
  findPolicy,
  insertRequest,
  listLivePoliciesOfEnv,
  listRequests,
  listReviews,
  lockPolicy,
  type Holder,
  type PolicyRow,
  type RequestRow,
  type ReviewRow,
} from "./access-request.repository";
import { loadPolicyDetails, type PolicyDetails } from "./access-policy.service";
import { privilegesOfRequests } from "./access-grants";

export type Status = AccessRequest["status"];

export const requestNotFound = (id: string) => new NotFoundError(`Access request with ID ${id} not found`);

export const holderOf = (ctx: RequestContext): Holder => ({ type: ctx.actor.type, id: ctx.actor.id });
export const requesterOf = (row: RequestRow): Holder =>
  row.requester_type === "user"
    ? { type: "user", id: row.requested_by_user_id! }
    : { type: "identity", id: row.requested_by_identity_id! };

/** Pending past its window is expired; the stored status stays pending (nothing happened to it). */
export const statusOf = (row: RequestRow, now: number): Status =>
  row.status === "pending" && row.expires_at !== null && new Date(row.expires_at).getTime() <= now
    ? "expired"
    : (row.status as Status);

/** Is the holder named by the policy in this role, directly or through a group? */
export const isNamed = (details: PolicyDetails, role: "approvers" | "bypassers", holder: Holder, groupIds: string[]) =>
  isAmong(details[role], holder, groupIds);

// ---- what is requested ----

/** `"/**"` when no path is named: the whole environment. */
const pathPatternOf = (path: AccessRequestPermission[2]["secretPath"]) =>
  path === undefined ? "/**" : typeof path === "string" ? path : path.$glob;

/** One environment and one path per request; the rules the privilege will hold. */
const parseRequested = (permissions: AccessRequestPermission[]) => {
  const envs = new Set(permissions.map(([, , c]) => c.environment));
  const paths = new Set(permissions.map(([, , c]) => pathPatternOf(c.secretPath)));
  if (envs.size !== 1 || paths.size !== 1)
    throw new BadRequestError("All requested permissions must name the same environment and secret path");
  const legacy: LegacyPermission[] = permissions.flatMap(([actions, subject, conditions]) =>
    [...new Set(actions.split(",").map((a) => a.trim()))].map((action) => ({
      action: action as LegacyPermission["action"],
      subject,
      conditions,
    })),
  );
  return {
    envSlug: [...envs][0]!,
    secretPath: [...paths][0]!,
    rules: expandLegacyPermissions({ permissions: legacy })!,
  };
};

export const policyCoversPath = (policy: PolicyRow, path: string) => isGlobSubsetOfGlob(path, policy.secret_path);

/** Of the live policies covering the environment and path, the one with the most specific path. */
const matchPolicy = (policies: readonly PolicyRow[], path: string) =>
  policies.filter((p) => policyCoversPath(p, path)).sort((a, b) => b.secret_path.length - a.secret_path.length)[0];

// ---- responses ----

const buildDtos = async (ctx: RequestContext, rows: readonly RequestRow[]): Promise<AccessRequest[]> => {
  const ids = rows.map((r) => r.id);
  const policyRows = await Promise.all(
    [...new Set(rows.map((r) => r.policy_id))].map(async (id) => (await findPolicy(ctx.deps.db, id))!),
  );
  const [policies, reviews, privileges, people, identities] = await Promise.all([
    loadPolicyDetails(ctx, policyRows),
    listReviews(ctx.deps.db, ids),
    privilegesOfRequests(ctx.deps.db, ids),
    findPeople(ctx.deps.db, [
      ...new Set(rows.flatMap((r) => (r.requested_by_user_id ? [r.requested_by_user_id] : []))),
    ]),
    findIdentities(ctx.deps.db, [
      ...new Set(rows.flatMap((r) => (r.requested_by_identity_id ? [r.requested_by_identity_id] : []))),
    ]),
  ]);
  const now = ctx.deps.clock.now();
  return rows.map((row) => {
    const policy = policies.get(row.policy_id)!;
    const privilege = privileges.get(row.id);
    const person = people.find((p) => p.id === row.requested_by_user_id);
    const identity = identities.find((i) => i.id === row.requested_by_identity_id);
    const status = statusOf(row, now);
    return {
      id: row.id,
      policyId: policy.row.deleted_at === null ? row.policy_id : null,
      projectId: row.project_id,
      status,
      isApproved: status === "approved",
      permissions: row.permissions as AccessRequestPermission[],
      isTemporary: row.is_temporary,
      temporaryRange: row.temporary_range,
      environment: row.env_slug,
      environmentName: row.env_name,
      secretPath: row.secret_path,
      requesterType: row.requester_type as "user" | "identity",
      requestedByUserId: row.requested_by_user_id,
      requestedByIdentityId: row.requested_by_identity_id,
      requestedByUser: person
        ? {
            userId: person.id,
            email: person.email,
            username: person.username,
            firstName: person.first_name,
            lastName: person.last_name,
          }
        : null,
      requestedByIdentity: identity ? { identityId: identity.id, name: identity.name } : null,
      privilege: privilege
        ? {
            id: privilege.id,
            membershipId: privilege.membership_id,
            isTemporary: privilege.is_temporary,
            temporaryMode: privilege.temporary_mode,
            temporaryRange: privilege.temporary_range,
            temporaryAccessStartTime: toIso(privilege.temporary_access_start_time),
            temporaryAccessEndTime: toIso(privilege.temporary_access_end_time),
            permissions: privilege.permissions,
          }
        : null,
      policy: {
        id: policy.row.id,
        name: policy.row.name,
        approvals: policy.row.approvals,
        approvers: policy.approvers,
        secretPath: policy.row.secret_path,
        envId: policy.environments[0]?.id ?? null,
        enforcementLevel: policy.row.enforcement_level as "hard" | "soft",
        allowedSelfApprovals: policy.row.allowed_self_approvals,
        deletedAt: toIso(policy.row.deleted_at),
      },
      reviewers: reviews.filter((r) => r.request_id === row.id).map(toReviewerDto),
      approvedAt: toIso(row.approved_at),
      revokedAt: toIso(row.revoked_at),
      revokedByUserId: row.revoked_by_user_id,
      revokedByIdentityId: row.revoked_by_identity_id,
      createdAt: toIso(row.created_at),
      updatedAt: toIso(row.updated_at),
    };
  });
};

export const toReviewerDto = (r: ReviewRow) => ({
  reviewerType: r.reviewer_type as "user" | "identity",
  userId: r.reviewer_user_id,
  identityId: r.reviewer_identity_id,
  status: r.status as "approved" | "rejected",
  bypassReason: r.bypass_reason,
});

export const dtoOf = async (ctx: RequestContext, row: RequestRow) => (await buildDtos(ctx, [row]))[0]!;

// ---- create ----

/** A request waits for its approvals no longer than its range, nor than the policy's expiration time. */
const pendingUntil = (now: number, range: string | null, expiration: string | null) => {
  const limits = [range, expiration].flatMap((d) => (d === null ? [] : [parseDuration(d)!]));
  return limits.length === 0 ? null : new Date(now + Math.min(...limits));
};

export const createAccessRequest = async (
  ctx: RequestContext,
  projectSlug: string,
  body: { permissions: AccessRequestPermission[]; isTemporary: boolean; temporaryRange?: string },
) => {
  const { project, ability } = await getProjectPermissionBySlug(ctx, projectSlug, SECRET_MANAGER);
  const requested = parseRequested(body.permissions);
  const env = await lookupEnvironmentBySlug(ctx.deps.db, project.id, requested.envSlug);
  if (!env) throw new NotFoundError(`Environment with slug ${requested.envSlug} not found`);
  const policy = matchPolicy(await listLivePoliciesOfEnv(ctx.deps.db, project.id, env.id), requested.secretPath);
  if (!policy)
    throw new BadRequestError(
      `No access approval policy covers environment '${requested.envSlug}' and secret path '${requested.secretPath}'`,
    );
  if (body.isTemporary && body.temporaryRange === undefined)
    throw new BadRequestError("A temporary range is required for temporary requests");
  const range = body.temporaryRange ?? null;
  if (
    policy.max_time_period !== null &&
    (range === null || parseDuration(range)! > (parseDuration(policy.max_time_period) ?? Number.POSITIVE_INFINITY))
  )
    throw new BadRequestError(`Requested access time range is limited to ${policy.max_time_period} by policy`);
  const requester = holderOf(ctx);
  if (!(await findDirectMembershipId(ctx.deps.db, project.id, requester)))
    throw new BadRequestError("Access can be requested only by a direct member of the project");
  if (missingPermissions(ability, requested.rules).length === 0)
    throw new BadRequestError("You already have an active privilege with the same criteria");
  const rulesJson = JSON.stringify(requested.rules);
  const now = ctx.deps.clock.now();
  const row = await inTransaction(ctx, async (trx) => {
    // Requests under one policy queue here, so two identical ones cannot both pass the twin check.
    const locked = await lockPolicy(trx, policy.id);
    if (!locked || locked.deleted_at !== null)
      throw new BadRequestError("The policy associated with this access request has been deleted.");
    const twins = await findPendingTwin(trx, policy.id, requester, rulesJson);
    if (twins.some((t) => t.expires_at === null || new Date(t.expires_at).getTime() > now))
      throw new BadRequestError("You already have a pending access request with the same criteria");
    const row = await insertRequest(trx, {
      project_id: project.id,
      policy_id: policy.id,
      env_id: env.id,
      env_slug: env.slug,
      env_name: env.name,
      secret_path: requested.secretPath,
      permissions: JSON.stringify(body.permissions),
      rules: rulesJson,
      is_temporary: body.isTemporary,
      temporary_range: range,
      requester_type: requester.type,
      requested_by_user_id: requester.type === "user" ? requester.id : null,
      requested_by_identity_id: requester.type === "identity" ? requester.id : null,
      expires_at: pendingUntil(now, range, locked.request_expiration_time),
    });
    noteAudit(ctx, {
      metadata: {
        requestId: row.id,
        policyId: policy.id,
        environment: env.slug,
        secretPath: requested.secretPath,
        isTemporary: body.isTemporary,
        temporaryRange: range,
      },
    });
    return row;
  });
  return dtoOf(ctx, row);
};

// ---- reads ----

/**
 * Those who may read the project's approvals see every request; others their own and those they approve.
 * `reviewable` keeps only the requests whose policy names the caller as an approver (their inbox).
 */
const visibleRequests = async (
  ctx: RequestContext,
  projectSlug: string,
  filter: { authorProjectMembershipId?: string; envSlug?: string; reviewable?: "true" | "false" },
) => {
  const { project, ability } = await getProjectPermissionBySlug(ctx, projectSlug, SECRET_MANAGER);
  let requester: Holder | undefined;
  if (filter.authorProjectMembershipId !== undefined) {
    requester = isUuid(filter.authorProjectMembershipId)
      ? await findMembershipHolder(ctx.deps.db, project.id, filter.authorProjectMembershipId)
      : undefined;
    if (!requester) return [];
  }
  const rows = await listRequests(ctx.deps.db, project.id, { requester, envSlug: filter.envSlug });
  const reviewable = filter.reviewable === "true";
  if (ability.can("read", "secret-approval") && !reviewable) return rows;
  const me = holderOf(ctx);
  const groupIds = await groupIdsOf(ctx.deps.db, me);
  const policies = await loadPolicyDetails(
    ctx,
    await Promise.all(
      [...new Set(rows.map((r) => r.policy_id))].map(async (id) => (await findPolicy(ctx.deps.db, id))!),
    ),
  );
  const approves = (row: RequestRow) => isNamed(policies.get(row.policy_id)!, "approvers", me, groupIds);
  return rows.filter((row) => approves(row) || (!reviewable && sameHolder(requesterOf(row), me)));
};

export const listAccessRequests = async (
  ctx: RequestContext,
  query: { projectSlug: string; authorProjectMembershipId?: string; envSlug?: string; reviewable?: "true" | "false" },
) => buildDtos(ctx, await visibleRequests(ctx, query.projectSlug, query));

export const countAccessRequests = async (ctx: RequestContext, query: { projectSlug: string; envSlug?: string }) => {
  const rows = await visibleRequests(ctx, query.projectSlug, query);
  const now = ctx.deps.clock.now();
  const pendingCount = rows.filter((r) => statusOf(r, now) === "pending").length;
  return { pendingCount, finalizedCount: rows.length - pendingCount };
};
