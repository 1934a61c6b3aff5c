/** Change requests as their readers see them: a request with its changes (values only for readers), lists and counts. */
import { SECRET_VALUE_HIDDEN_MASK, type ChangeRequestDetail, type SecretApprovalPolicy } from "@keyward/contract";
import { type RequestContext } from "../../../context";
import type { Database } from "../../../db/database";
import { isUuid } from "../../../db/errors";
import { ForbiddenError } from "../../../errors";
import type { Ability } from "../../../permissions";
import { getProjectPermission } from "../../authz/project-access";
import { SECRET_MANAGER } from "../../folders/folder.service";
import { findProjectKey } from "../../project-keys/project-key.service";
import { canReadValue, secretObject } from "../../secrets/secret-access";
import { readSecretStamps, type SecretStamp } from "../../secrets/secret-apply";
import { resolveTagIds } from "../../secrets/tags/tag.service";
import { standingOf } from "../approval-policy";
import { projectOf } from "./secret-policy.service";
import { findPolicy, listProjectPolicyIds, type PolicyRow } from "./secret-policy.repository";
import {
  countRequestsByStatus,
  listCommits,
  listReviews,
  pageRequests,
  type CommitRow,
  type RequestFilter,
  type RequestRow,
  type ReviewRow,
} from "./change-request.repository";
import {
  principalOf,
  same,
  iso,
  commitAad,
  policyDto,
  toRequestDto,
  requestInScope,
  rolesOf,
  countApprovals,
  type Principal,
} from "./change-request.service";

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

/** The policies of a project that list the caller as approver or bypasser. */
const policiesReviewedBy = async (db: Database, projectId: string, actor: Principal) => {
  const { approverOf, bypasserOf } = await standingOf(db, "secret", actor, await livePolicyIds(db, projectId));
  return [...new Set([...approverOf, ...bypasserOf])];
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
