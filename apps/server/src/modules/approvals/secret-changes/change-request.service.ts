/** Writes that policies protect become change requests here; the pieces the read and review services share. */
import { randomBytes, randomUUID } from "node:crypto";
import { type ChangeRequest } from "@keyward/contract";
import { noteAudit, type Actor, type RequestContext } from "../../../context";
import type { Database } from "../../../db/database";
import { isUuid } from "../../../db/errors";
import { inRolledBackTransaction, inTransaction } from "../../../db/transaction";
import { BadRequestError, NotFoundError } from "../../../errors";
import { getProjectPermission } from "../../authz/project-access";
import { SECRET_MANAGER } from "../../folders/folder.service";
import { ensureProjectKey } from "../../project-keys/project-key.service";
import { applyChanges, lockSecretStamps } from "../../secrets/secret-apply";
import type { ProposedChange, ProposedTarget, SecretWriteGate } from "../../secrets/write-gate";
import { sameHolder, type Holder } from "../../authz/principals";
import { rolesIn } from "../approval-policy";
import { findApplyingPolicy, toPolicyDtos } from "./secret-policy.service";
import { findPolicy, type PolicyRow } from "./secret-policy.repository";
import {
  findRequest,
  insertCommits,
  insertRequest,
  type CommitValues,
  type RequestRow,
  type ReviewRow,
} from "./change-request.repository";

export type Principal = Holder;
export const principalOf = (actor: Actor): Principal => ({ type: actor.type, id: actor.id });
export const same = sameHolder;
export const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());
export const commitAad = (commitId: string, column: string) => `secret_approval_request_commits:${commitId}:${column}`;

export const policyDto = async (db: Database, row: PolicyRow) => (await toPolicyDtos(db, [row]))[0]!;

export const toRequestDto = (row: RequestRow): ChangeRequest => ({
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
  await inRolledBackTransaction(ctx.deps.db, (trx) => applyChanges({ ...ctx, scope: undefined }, trx, target, changes));
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
export const requestInScope = async (ctx: RequestContext, requestId: string) => {
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
export const rolesOf = (db: Database, policyId: string, actor: Principal) => rolesIn(db, "secret", policyId, actor);

/** Approving reviews that count: by someone the policy lists as approver now, the committer only when allowed. */
export const countApprovals = async (
  db: Database,
  request: RequestRow,
  policy: PolicyRow,
  reviews: readonly ReviewRow[],
) => {
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

/** The gate secrets' writes pass through: change policies decide. */
export const createSecretWriteGate = (): { secretWriteGate: SecretWriteGate } => ({
  secretWriteGate: { propose: proposeIfProtected, assertUnprotected },
});
