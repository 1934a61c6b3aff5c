/** Change requests worked on: reviews, close and reopen, and the merge that applies them. */
import { noteAudit, type RequestContext } from "../../../context";
import { inTransaction } from "../../../db/transaction";
import type { ChangeConflict } from "../../../db/tables/approvals";
import { BadRequestError, ForbiddenError } from "../../../errors";
import { abilityOfMember } from "../../authz/project-access";
import { ensureProjectKey } from "../../project-keys/project-key.service";
import { lockSecretStamps, type SecretStamp } from "../../secrets/secret-apply";
import { type PolicyRow } from "./secret-policy.repository";
import {
  listCommits,
  listReviews,
  lockRequest,
  updateRequestRow,
  upsertReview,
  type CommitRow,
} from "./change-request.repository";
import {
  principalOf,
  same,
  iso,
  commitAad,
  toRequestDto,
  requestInScope,
  rolesOf,
  countApprovals,
  type Principal,
} from "./change-request.service";
import type { ProposedChange } from "../../secrets/write-gate";
import { applyChanges } from "../../secrets/secret-apply";

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
