import { randomBytes, randomUUID } from "node:crypto";
import {
  SECRET_VALUE_HIDDEN_MASK,
  type ChangeRequest,
  type ChangeRequestDetail,
  type SecretApprovalPolicy,
} from "@keyward/contract";
import { noteAudit, type Actor, type RequestContext } from "../../context";
import type { Database } from "../../db/database";
import { isUuid } from "../../db/errors";
import { inTransaction, type Tx } from "../../db/transaction";
import type { ChangeConflict } from "../../db/tables/approvals";
import { BadRequestError, ForbiddenError, NotFoundError } from "../../errors";
import type { Ability } from "../../permissions";
import { abilityOfMember, getProjectPermission } from "../authz/project-access";
import { SECRET_MANAGER } from "../folders/folder.service";
import { ensureProjectKey, findProjectKey } from "../project-keys/project-key.service";
import { canReadValue, secretObject } from "../secrets/secret-access";
import {
  applyCreates,
  applyDeletes,
  applyUpdates,
  lockSecretStamps,
  readSecretStamps,
  type BatchCreateItem,
  type BatchUpdateItem,
  type SecretStamp,
} from "../secrets/secret-apply";
import { resolveTagIds } from "../secrets/tags/tag.service";
import { findApplyingPolicy, toPolicyDtos } from "./approval-policy.service";
import {
  countRequestsByStatus,
  findGroupIdsOf,
  findPolicy,
  findRequest,
  insertCommits,
  insertRequest,
  listCommits,
  listPolicyPrincipals,
  listProjectPolicyIds,
  listReviews,
  lockRequest,
  pageRequests,
  updateRequestRow,
  upsertReview,
  type CommitRow,
  type CommitValues,
  type PolicyRow,
  type RequestFilter,
  type RequestRow,
  type ReviewRow,
} from "./secret-approval.repository";

/** One secret's part of a write that a policy turned into a change request. */
export type ProposedChange =
  | { op: "create"; item: BatchCreateItem }
  | { op: "update"; item: Omit<BatchUpdateItem, "secretPath"> }
  | { op: "delete"; secretKey: string };

/** Where the write was aimed and who made it. */
export type ProposedTarget = {
  projectId: string;
  ability: Ability;
  folderId: string;
  environment: string;
  secretPath: string;
};

type Principal = { type: "user" | "identity"; id: string };
const principalOf = (actor: Actor): Principal => ({ type: actor.type, id: actor.id });
const same = (a: Principal, b: { type: string; id: string }) => a.type === b.type && a.id === b.id;
const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());
const commitAad = (commitId: string, column: string) => `secret_approval_request_commits:${commitId}:${column}`;

/** A signal that rolls back a transaction run only to prove a change would apply. */
class DryRunDone extends Error {}

/**
 * Runs the changes inside the caller's transaction, judged against `ability`, in the order that lets
 * one request delete a key and create it again: deletes, then updates, then creates.
 */
const applyChanges = async (
  ctx: RequestContext,
  trx: Tx,
  target: ProposedTarget,
  changes: readonly ProposedChange[],
) => {
  const deletes = changes.flatMap((c) => (c.op === "delete" ? [c.secretKey] : []));
  const updates = changes.flatMap((c) => (c.op === "update" ? [c.item] : []));
  const creates = changes.flatMap((c) => (c.op === "create" ? [c.item] : []));
  if (deletes.length > 0) await applyDeletes(ctx, trx, target, deletes);
  if (updates.length > 0)
    await applyUpdates(
      ctx,
      trx,
      target,
      new Map([[target.secretPath, target.folderId]]),
      new Map([[target.secretPath, updates]]),
      "failOnNotFound",
    );
  if (creates.length > 0) await applyCreates(ctx, trx, target, creates);
};

const policyDto = async (db: Database, row: PolicyRow) => (await toPolicyDtos(db, [row]))[0]!;

const toRequestDto = (row: RequestRow): ChangeRequest => ({
  id: row.id,
  slug: row.slug,
  projectId: row.project_id,
  policyId: row.policy_id,
  folderId: row.folder_id,
  environment: row.environment,
  secretPath: row.secret_path,
  status: row.status as "open" | "close",
  hasMerged: row.has_merged,
  conflicts: row.conflicts,
  committerType: row.committer_type as "user" | "identity",
  committerId: row.committer_id,
  committerUserId: row.committer_type === "user" ? row.committer_id : null,
  committerIdentityId: row.committer_type === "identity" ? row.committer_id : null,
  statusChangedByType: row.status_changed_by_type,
  statusChangedById: row.status_changed_by_id,
  bypassReason: row.bypass_reason,
  mergedAt: iso(row.merged_at),
  createdAt: iso(row.created_at)!,
  updatedAt: iso(row.updated_at)!,
});

/**
 * The write a policy protects, opened as a change request instead of made; undefined when no policy
 * applies (or the caller is a machine identity the policy lets through). The change is first run
 * and rolled back, so a request is opened only for a change its committer may make and that would
 * apply now; the secrets' versions are recorded, and a merge refuses when any has moved on.
 */
export const proposeIfProtected = async (
  ctx: RequestContext,
  target: ProposedTarget,
  changes: readonly ProposedChange[],
): Promise<ChangeRequest | undefined> => {
  const policy = await findApplyingPolicy(ctx.deps.db, target.projectId, target.environment, target.secretPath);
  if (!policy) return undefined;
  if (ctx.actor.type === "identity" && policy.bypass_for_machine_identities) return undefined;
  if (changes.length === 0) throw new BadRequestError("Empty commits");
  await inTransaction(ctx.deps.db, async (trx) => {
    await applyChanges({ ...ctx, scope: undefined }, trx, target, changes);
    throw new DryRunDone();
  }).catch((error: unknown) => {
    if (!(error instanceof DryRunDone)) throw error;
  });
  const row = await inTransaction(ctx, async (trx) => {
    const keys = changes.map((c) => (c.op === "delete" ? c.secretKey : c.item.secretKey));
    const seen = new Map((await lockSecretStamps(trx, target.folderId, keys)).map((s) => [s.key, s]));
    const key = await ensureProjectKey(ctx.deps, trx, target.projectId);
    const request = await insertRequest(trx, {
      slug: randomBytes(8).toString("hex"),
      project_id: target.projectId,
      policy_id: policy.id,
      folder_id: target.folderId,
      environment: target.environment,
      secret_path: target.secretPath,
      committer_type: ctx.actor.type,
      committer_id: ctx.actor.id,
    });
    const commits = changes.map((change, position): CommitValues => {
      const id = randomUUID();
      const secretKey = change.op === "delete" ? change.secretKey : change.item.secretKey;
      const current = seen.get(secretKey);
      const item = change.op === "delete" ? undefined : change.item;
      const seal = (text: string | undefined, column: string) =>
        text === undefined ? null : key.seal(text, commitAad(id, column));
      return {
        id,
        position,
        op: change.op,
        secret_key: secretKey,
        new_secret_key: change.op === "update" ? (change.item.newSecretName ?? null) : null,
        secret_id: change.op === "create" ? null : (current?.id ?? null),
        secret_version: change.op === "create" ? null : (current?.version ?? null),
        encrypted_value: seal(item?.secretValue, "value"),
        encrypted_comment: seal(item?.secretComment, "comment"),
        tag_ids: item?.tagIds ?? null,
        metadata: item?.secretMetadata ?? null,
        skip_multiline_encoding: item?.skipMultilineEncoding ?? null,
      };
    });
    await insertCommits(trx, request.id, commits);
    noteAudit(ctx, {
      eventType: "secret-approval-request",
      metadata: {
        secretApprovalRequestId: request.id,
        secretApprovalRequestSlug: request.slug,
        policyId: policy.id,
        committedBy: ctx.actor.id,
        secrets: commits.map((c) => ({ op: c.op, secretKey: c.secret_key })),
      },
    });
    return request;
  });
  return toRequestDto(row);
};

/**
 * For writes that have no change-request form (a version rollback, a move): refused in a folder a
 * change policy protects, so no route writes there without review.
 */
export const assertUnprotected = async (
  ctx: RequestContext,
  projectId: string,
  at: { environment: string; secretPath: string },
  what: string,
) => {
  const policy = await findApplyingPolicy(ctx.deps.db, projectId, at.environment, at.secretPath);
  if (!policy || (ctx.actor.type === "identity" && policy.bypass_for_machine_identities)) return;
  throw new BadRequestError(
    `A change policy protects ${at.environment}:${at.secretPath}: ${what} is not allowed there; change the secrets through a change request`,
  );
};

/** The request and the caller's standing; another organization's request is a 404. */
const requestInScope = async (ctx: RequestContext, requestId: string) => {
  const notFound = () => new NotFoundError(`Secret approval request with ID '${requestId}' not found`);
  const row = isUuid(requestId) ? await findRequest(ctx.deps.db, requestId) : undefined;
  if (!row) throw notFound();
  const { ability } = await getProjectPermission(ctx, row.project_id, SECRET_MANAGER).catch((error: unknown) => {
    throw error instanceof NotFoundError ? notFound() : error;
  });
  const policy = (await findPolicy(ctx.deps.db, row.policy_id))!;
  return { row, policy, ability };
};

/** The reviewer principals of a policy that an actor counts as, directly or through a group. */
const rolesOf = async (db: Database, policyId: string, actor: Principal) => {
  const [principals, groups] = await Promise.all([listPolicyPrincipals(db, [policyId]), findGroupIdsOf(db, actor)]);
  const listed = (role: string) =>
    principals.some(
      (p) =>
        p.role === role &&
        (same(actor, { type: p.principal_type, id: p.principal_id }) ||
          (p.principal_type === "group" && groups.includes(p.principal_id))),
    );
  return { approver: listed("approver"), bypasser: listed("bypasser") };
};

/** Approving reviews that count: by someone the policy lists as approver now, the committer only when allowed. */
const countApprovals = async (db: Database, request: RequestRow, policy: PolicyRow, reviews: readonly ReviewRow[]) => {
  let count = 0;
  for (const review of reviews) {
    if (review.request_id !== request.id || review.status !== "approved") continue;
    const reviewer: Principal = { type: review.reviewer_type as Principal["type"], id: review.reviewer_id };
    if (!policy.allowed_self_approvals && same(reviewer, { type: request.committer_type, id: request.committer_id }))
      continue;
    if ((await rolesOf(db, policy.id, reviewer)).approver) count += 1;
  }
  return count;
};

const readsApprovals = (ability: Ability) => ability.can("read", "secret-approval");

/** Only those who may see a request: readers of approvals, its committer, its approvers and bypassers. */
const assertMaySee = async (ctx: RequestContext, row: RequestRow, policy: PolicyRow, ability: Ability) => {
  const me = principalOf(ctx.actor);
  if (readsApprovals(ability) || same(me, { type: row.committer_type, id: row.committer_id })) return;
  const roles = await rolesOf(ctx.deps.db, policy.id, me);
  if (!roles.approver && !roles.bypasser) throw new ForbiddenError("User has insufficient privileges");
};

const tagSlugsOf = async (db: Database, projectId: string, ids: readonly string[] | null) =>
  ids === null ? undefined : (await resolveTagIds(db, projectId, ids).catch(() => [])).map((t) => t.slug);

/** A request as shown: changes with values only where the caller may read them, reviews, its policy. */
const toDetail = async (
  ctx: RequestContext,
  row: RequestRow,
  policy: SecretApprovalPolicy,
  ability: Ability,
  commits: readonly CommitRow[],
  reviews: readonly ReviewRow[],
  policyRow: PolicyRow,
): Promise<ChangeRequestDetail> => {
  const key = await findProjectKey(ctx.deps, row.project_id);
  const current = new Map(
    (
      await readSecretStamps(
        ctx.deps.db,
        row.folder_id,
        commits.map((c) => c.secret_key),
      )
    ).map((s): [string, SecretStamp] => [s.key, s]),
  );
  const shown = [];
  for (const commit of commits) {
    const newTags = await tagSlugsOf(ctx.deps.db, row.project_id, commit.tag_ids);
    const nowTags = current.get(commit.secret_key)?.tagSlugs ?? [];
    const names = [commit.secret_key, ...(commit.new_secret_key ? [commit.new_secret_key] : [])];
    const readable = names.every(
      (name) =>
        canReadValue(ability, secretObject(row.environment, row.secret_path, name, nowTags)) &&
        canReadValue(ability, secretObject(row.environment, row.secret_path, name, newTags ?? nowTags)),
    );
    const open = (column: "value" | "comment", sealed: string | null) =>
      sealed === null || !key ? undefined : key.open(sealed, commitAad(commit.id, column));
    shown.push({
      op: commit.op as "create" | "update" | "delete",
      secretKey: commit.secret_key,
      newSecretName: commit.new_secret_key,
      secretId: commit.secret_id,
      secretVersion: commit.secret_version,
      changesValue: commit.encrypted_value !== null,
      secretValue:
        commit.encrypted_value === null
          ? undefined
          : readable
            ? open("value", commit.encrypted_value)
            : SECRET_VALUE_HIDDEN_MASK,
      secretValueHidden: commit.encrypted_value !== null && !readable,
      secretComment: readable ? open("comment", commit.encrypted_comment) : undefined,
      tagIds: commit.tag_ids,
      skipMultilineEncoding: commit.skip_multiline_encoding,
    });
  }
  const own = reviews.filter((r) => r.request_id === row.id);
  return {
    ...toRequestDto(row),
    policy,
    commits: shown,
    reviewers: own.map((r) => ({
      reviewerType: r.reviewer_type as "user" | "identity",
      reviewerId: r.reviewer_id,
      userId: r.reviewer_type === "user" ? r.reviewer_id : null,
      status: r.status as "approved" | "rejected",
      comment: r.comment,
      createdAt: iso(r.created_at)!,
    })),
    approvalCount: await countApprovals(ctx.deps.db, row, policyRow, own),
  };
};

export const getChangeRequest = async (ctx: RequestContext, requestId: string) => {
  const { row, policy, ability } = await requestInScope(ctx, requestId);
  await assertMaySee(ctx, row, policy, ability);
  const [commits, reviews] = await Promise.all([
    listCommits(ctx.deps.db, [row.id]),
    listReviews(ctx.deps.db, [row.id]),
  ]);
  return toDetail(ctx, row, await policyDto(ctx.deps.db, policy), ability, commits, reviews, policy);
};

const projectOf = (query: { projectId?: string; workspaceId?: string }) => {
  const id = query.projectId ?? query.workspaceId;
  if (id === undefined) throw new BadRequestError("projectId is required");
  return id;
};

/** The policies of a project that list the caller as approver or bypasser. */
const policiesReviewedBy = async (db: Database, projectId: string, actor: Principal) => {
  const rows = await listPolicyPrincipals(db, await livePolicyIds(db, projectId));
  const groups = await findGroupIdsOf(db, actor);
  return [
    ...new Set(
      rows
        .filter(
          (p) =>
            same(actor, { type: p.principal_type, id: p.principal_id }) ||
            (p.principal_type === "group" && groups.includes(p.principal_id)),
        )
        .map((p) => p.policy_id),
    ),
  ];
};

const livePolicyIds = async (db: Database, projectId: string) =>
  (await listProjectPolicyIds(db, projectId)).map((p) => p.id);

/** The filter a caller's listing runs under: everything for readers of approvals, else their own and those they review. */
const visibility = async (ctx: RequestContext, projectId: string, ability: Ability, reviewable: boolean) => {
  const me = principalOf(ctx.actor);
  const mine = reviewable || !readsApprovals(ability) ? await policiesReviewedBy(ctx.deps.db, projectId, me) : [];
  if (reviewable) return { policyIds: mine };
  return readsApprovals(ability) ? {} : { visibleTo: { committer: me, policyIds: mine } };
};

export const listChangeRequests = async (
  ctx: RequestContext,
  query: {
    projectId?: string;
    workspaceId?: string;
    environment?: string;
    committer?: string;
    status?: "open" | "close";
    search?: string;
    reviewable?: "true" | "false";
    limit: number;
    offset: number;
  },
) => {
  const { project, ability } = await getProjectPermission(ctx, projectOf(query), SECRET_MANAGER);
  const filter: RequestFilter = {
    projectId: project.id,
    environment: query.environment,
    status: query.status,
    committerId: query.committer !== undefined && isUuid(query.committer) ? query.committer : undefined,
    search: query.search,
    ...(await visibility(ctx, project.id, ability, query.reviewable === "true")),
  };
  if (query.committer !== undefined && !isUuid(query.committer)) return { approvals: [], totalCount: 0 };
  const { rows, total } = await pageRequests(ctx.deps.db, filter, query.limit, query.offset);
  const ids = rows.map((r) => r.id);
  const [commits, reviews] = await Promise.all([listCommits(ctx.deps.db, ids), listReviews(ctx.deps.db, ids)]);
  const policies = new Map<string, { row: PolicyRow; dto: SecretApprovalPolicy }>();
  const approvals = [];
  for (const row of rows) {
    let policy = policies.get(row.policy_id);
    if (!policy) {
      const policyRow = (await findPolicy(ctx.deps.db, row.policy_id))!;
      policy = { row: policyRow, dto: await policyDto(ctx.deps.db, policyRow) };
      policies.set(row.policy_id, policy);
    }
    approvals.push(
      await toDetail(
        ctx,
        row,
        policy.dto,
        ability,
        commits.filter((c) => c.request_id === row.id),
        reviews,
        policy.row,
      ),
    );
  }
  return { approvals, totalCount: total };
};

export const countChangeRequests = async (
  ctx: RequestContext,
  query: { projectId?: string; workspaceId?: string; policyId?: string },
) => {
  const { project, ability } = await getProjectPermission(ctx, projectOf(query), SECRET_MANAGER);
  if (query.policyId !== undefined && !isUuid(query.policyId)) return { open: 0, closed: 0 };
  return countRequestsByStatus(ctx.deps.db, {
    projectId: project.id,
    policyId: query.policyId,
    ...(await visibility(ctx, project.id, ability, false)),
  });
};

const assertPolicyLive = (policy: PolicyRow) => {
  if (policy.deleted_at !== null)
    throw new BadRequestError("The policy associated with this secret approval request has been deleted.");
};

/** Approve or reject: only the policy's approvers; a rejection closes the request. */
export const reviewChangeRequest = async (
  ctx: RequestContext,
  requestId: string,
  body: { status: "approved" | "rejected"; comment?: string },
) => {
  const { row, policy } = await requestInScope(ctx, requestId);
  const me = principalOf(ctx.actor);
  const roles = await rolesOf(ctx.deps.db, policy.id, me);
  if (!roles.approver) throw new ForbiddenError("Only an approver of the policy can review this request");
  if (same(me, { type: row.committer_type, id: row.committer_id }) && !policy.allowed_self_approvals)
    throw new BadRequestError(
      "The policy does not allow self-approval. Users are not authorized to review their own request.",
    );
  return inTransaction(ctx, async (trx) => {
    const locked = (await lockRequest(trx, row.id))!;
    assertPolicyLive(policy);
    if (locked.has_merged) throw new BadRequestError("Approval request has been merged");
    if (locked.status !== "open") throw new BadRequestError("You can only review open approval requests");
    const review = await upsertReview(trx, {
      request_id: row.id,
      reviewer_type: me.type,
      reviewer_id: me.id,
      status: body.status,
      comment: body.comment ?? null,
    });
    if (body.status === "rejected")
      await updateRequestRow(trx, row.id, {
        status: "close",
        status_changed_by_type: me.type,
        status_changed_by_id: me.id,
      });
    noteAudit(ctx, {
      projectId: row.project_id,
      metadata: {
        secretApprovalRequestId: row.id,
        secretApprovalRequestSlug: row.slug,
        reviewedBy: me.id,
        status: body.status,
        comment: body.comment ?? "",
      },
    });
    return {
      id: review.id,
      requestId: row.id,
      reviewerUserId: me.type === "user" ? me.id : null,
      reviewerIdentityId: me.type === "identity" ? me.id : null,
      status: body.status,
      comment: review.comment,
      createdAt: iso(review.created_at)!,
      updatedAt: iso(review.updated_at)!,
    };
  });
};

/** Close or reopen: the committer, an approver or a bypasser. */
export const setChangeRequestStatus = async (ctx: RequestContext, requestId: string, status: "open" | "close") => {
  const { row, policy } = await requestInScope(ctx, requestId);
  const me = principalOf(ctx.actor);
  const roles = await rolesOf(ctx.deps.db, policy.id, me);
  if (!same(me, { type: row.committer_type, id: row.committer_id }) && !roles.approver && !roles.bypasser)
    throw new ForbiddenError("User has insufficient privileges");
  const updated = await inTransaction(ctx, async (trx) => {
    const locked = (await lockRequest(trx, row.id))!;
    if (locked.has_merged) throw new BadRequestError("Approval request has been merged");
    if (status === "open") assertPolicyLive(policy);
    if (locked.status === status)
      throw new BadRequestError(
        status === "close" ? "Approval request is already closed" : "Approval request is already open",
      );
    noteAudit(ctx, {
      projectId: row.project_id,
      eventType: status === "close" ? "secret-approval-closed" : "secret-approval-reopened",
      metadata: {
        secretApprovalRequestId: row.id,
        secretApprovalRequestSlug: row.slug,
        [status === "close" ? "closedBy" : "reopenedBy"]: me.id,
      },
    });
    return updateRequestRow(trx, row.id, { status, status_changed_by_type: me.type, status_changed_by_id: me.id });
  });
  return toRequestDto(updated);
};

/** What a request's commits propose, opened. */
const proposedChanges = (key: { open: (s: string, aad: string) => string }, commits: readonly CommitRow[]) =>
  commits.map((c): ProposedChange => {
    const open = (column: string, sealed: string | null) =>
      sealed === null ? undefined : key.open(sealed, commitAad(c.id, column));
    if (c.op === "delete") return { op: "delete", secretKey: c.secret_key };
    const common = {
      secretKey: c.secret_key,
      secretValue: open("value", c.encrypted_value),
      secretComment: open("comment", c.encrypted_comment),
      tagIds: c.tag_ids ?? undefined,
      secretMetadata: c.metadata ?? undefined,
      skipMultilineEncoding: c.skip_multiline_encoding,
    };
    if (c.op === "create")
      return {
        op: "create",
        item: { ...common, secretValue: common.secretValue ?? "", secretComment: common.secretComment ?? "" },
      };
    return { op: "update", item: { ...common, newSecretName: c.new_secret_key ?? undefined } };
  });

/** The commits whose secret moved on since the request was opened. */
const conflictsOf = (commits: readonly CommitRow[], now: ReadonlyMap<string, SecretStamp>): ChangeConflict[] =>
  commits.flatMap((c): ChangeConflict[] => {
    const current = now.get(c.secret_key);
    if (c.op === "create")
      return current
        ? [{ secretKey: c.secret_key, op: c.op, reason: "a secret with this name was created since" }]
        : [];
    if (!current) return [{ secretKey: c.secret_key, op: c.op, reason: "the secret was deleted since" }];
    if (current.id !== c.secret_id || current.version !== c.secret_version)
      return [
        {
          secretKey: c.secret_key,
          op: c.op,
          reason: `the secret changed since (version ${c.secret_version} -> ${current.version})`,
        },
      ];
    if (c.new_secret_key !== null && c.new_secret_key !== c.secret_key && now.has(c.new_secret_key))
      return [{ secretKey: c.secret_key, op: c.op, reason: `a secret named ${c.new_secret_key} was created since` }];
    return [];
  });

class MergeConflict extends Error {
  constructor(readonly conflicts: ChangeConflict[]) {
    super("merge conflict");
  }
}

/**
 * Applies an approved request in one transaction, judged against its committer's rights as they are
 * now. The request row is locked first, so two mergers at once merge once. A secret that changed
 * since the request was opened fails the merge (the conflicts are recorded on the request), never
 * overwritten. A bypasser of a soft policy may merge without the approvals, with a reason on record.
 */
export const mergeChangeRequest = async (ctx: RequestContext, requestId: string, body: { bypassReason?: string }) => {
  const { row, policy } = await requestInScope(ctx, requestId);
  const me = principalOf(ctx.actor);
  const roles = await rolesOf(ctx.deps.db, policy.id, me);
  if (!same(me, { type: row.committer_type, id: row.committer_id }) && !roles.approver && !roles.bypasser)
    throw new ForbiddenError("User has insufficient privileges");
  assertPolicyLive(policy);
  const committer = { type: row.committer_type as Principal["type"], id: row.committer_id };
  const committerAbility = await abilityOfMember(ctx.deps, row.project_id, committer);
  if (!committerAbility)
    throw new BadRequestError("The committer of this request is no longer a member of the project");
  try {
    const merged = await inTransaction(ctx, async (trx) => {
      const locked = (await lockRequest(trx, row.id))!;
      if (locked.has_merged) throw new BadRequestError("Approval request has already been merged");
      if (locked.status !== "open") throw new BadRequestError("You can only merge open approval requests");
      const approvals = await countApprovals(trx, locked, policy, await listReviews(trx, [row.id]));
      let bypassReason: string | null = null;
      if (approvals < policy.approvals) {
        if (policy.enforcement_level !== "soft" || !roles.bypasser)
          throw new BadRequestError("Doesn't have minimum approvals needed");
        if (!body.bypassReason) throw new BadRequestError("A reason is required to bypass the approval policy");
        bypassReason = body.bypassReason;
      }
      const commits = await listCommits(trx, [row.id]);
      const stamps = await lockSecretStamps(
        trx,
        row.folder_id,
        commits.flatMap((c) => [c.secret_key, ...(c.new_secret_key ? [c.new_secret_key] : [])]),
      );
      const conflicts = conflictsOf(commits, new Map(stamps.map((s) => [s.key, s])));
      if (conflicts.length > 0) throw new MergeConflict(conflicts);
      const key = await ensureProjectKey(ctx.deps, trx, row.project_id);
      await applyChanges(
        ctx,
        trx,
        {
          projectId: row.project_id,
          ability: committerAbility,
          folderId: row.folder_id,
          environment: row.environment,
          secretPath: row.secret_path,
        },
        proposedChanges(key, commits),
      );
      noteAudit(ctx, {
        projectId: row.project_id,
        metadata: {
          mergedBy: me.id,
          secretApprovalRequestId: row.id,
          secretApprovalRequestSlug: row.slug,
          committer,
          ...(bypassReason !== null ? { bypassReason } : {}),
        },
      });
      return updateRequestRow(trx, row.id, {
        status: "close",
        has_merged: true,
        conflicts: [],
        merged_at: new Date(ctx.deps.clock.now()),
        bypass_reason: bypassReason,
        status_changed_by_type: me.type,
        status_changed_by_id: me.id,
      });
    });
    return toRequestDto(merged);
  } catch (error) {
    if (!(error instanceof MergeConflict)) throw error;
    await inTransaction(ctx.deps.db, (trx) => updateRequestRow(trx, row.id, { conflicts: error.conflicts }));
    throw new BadRequestError(
      `The secrets changed since the request was opened; nothing was merged: ${error.conflicts
        .map((c) => `${c.secretKey} (${c.reason})`)
        .join(", ")}`,
    );
  }
};
