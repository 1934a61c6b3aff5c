import { inTransaction } from "../../../db/transaction";
import type { ChangeRequest } from "@keyward/contract";
import { noteAudit, type RequestContext } from "../../../context";
import type { DataKey } from "../../../crypto/data-keys";
import { BadRequestError, NotFoundError, UnprocessableEntityError } from "../../../errors";
import type { Ability } from "../../../permissions";
import { lookupDescendantFolders } from "../../folders/folder.service";
import { ensureProjectKey, findProjectKey } from "../../project-keys/project-key.service";
import { asKeyConflict } from "../secret-persist";
import type { ProjectRef } from "../secret-access";
import { assertCommitAction, commitOf, folderById, type PlaceRef } from "./commit-access";
import { STALE, applyPlan, assertMayApply, proposedChangesOf } from "./commit-apply";
import { planBetween, resourceChangeOf, sameContent, type FolderAt, type PlanItem } from "./commit-plan";
import {
  commitsOfThisTransaction,
  findCommit,
  findLatestCommit,
  findPreviousCommit,
  folderStateAt,
  listCommitVersions,
  nameNextCommit,
  type CommitRow,
} from "./commit.repository";

/** A deep rollback reaches at most this many folders below its own. */
const MAX_DEEP_FOLDERS = 200;

type FolderPlan = { at: FolderAt; latestId: string | undefined; plan: PlanItem[] };

const folderNameOf = (path: string) => (path === "/" ? "root" : path.slice(path.lastIndexOf("/") + 1));

/** The folders a rollback covers: the commit's own, and with `deep` every folder below it. */
const foldersOf = async (ctx: RequestContext, at: FolderAt, deep: boolean): Promise<FolderAt[]> => {
  if (!deep) return [at];
  const below = await lookupDescendantFolders(ctx.deps.db, at.folderId, at.secretPath);
  if (below.length > MAX_DEEP_FOLDERS)
    throw new UnprocessableEntityError(
      `A deep rollback covers at most ${MAX_DEEP_FOLDERS} folders below its own; roll back smaller subtrees`,
    );
  return [at, ...below.map((f) => ({ folderId: f.id, environment: at.environment, secretPath: f.path }))];
};

/** The steps that put one folder back as it was once commit `seq` was written. */
const planFolder = async (ctx: RequestContext, key: DataKey | undefined, at: FolderAt, seq: string) => {
  const latest = await findLatestCommit(ctx.deps.db, at.folderId);
  if (!key || !latest) return { at, latestId: latest?.id, plan: [] };
  const [current, target] = await Promise.all([
    folderStateAt(ctx.deps.db, at.folderId, latest.seq),
    folderStateAt(ctx.deps.db, at.folderId, seq),
  ]);
  return { at, latestId: latest.id, plan: planBetween(key, current, target) };
};

/** The commit a compare or rollback names, which must be a commit of the named folder. */
const targetOf = async (ctx: RequestContext, ref: PlaceRef & { folderId: string }, commitId: string) => {
  const { project, ability, at } = await folderById(ctx, ref);
  const commit = await findCommit(ctx.deps.db, commitId);
  if (!commit || commit.folder_id !== at.folderId) throw new NotFoundError("Target commit not found");
  return { project, ability, at, commit };
};

const plansFor = async (ctx: RequestContext, projectId: string, at: FolderAt, commit: CommitRow, deep: boolean) => {
  const key = await findProjectKey(ctx.deps, projectId);
  const folders = await foldersOf(ctx, at, deep);
  const plans: FolderPlan[] = [];
  for (const folder of folders) plans.push(await planFolder(ctx, key, folder, commit.seq));
  return { key, plans };
};

/** GET /api/v1/pit/commits/:commitId/compare: what a rollback would do, changing nothing. */
export const compareCommit = async (
  ctx: RequestContext,
  query: PlaceRef & { folderId: string; deepRollback: boolean },
  commitId: string,
) => {
  const { project, ability, at, commit } = await targetOf(ctx, query, commitId);
  assertCommitAction(ability, "read", at);
  const { key, plans } = await plansFor(ctx, project.id, at, commit, query.deepRollback);
  const diffs = plans
    .filter((p, i) => i === 0 || p.plan.length > 0)
    .map((p) => ({
      folderId: p.at.folderId,
      folderName: folderNameOf(p.at.secretPath),
      folderPath: p.at.secretPath,
      changes: key ? p.plan.map((item) => resourceChangeOf(key, item, ability, p.at, commit.id)) : [],
    }));
  noteAudit(ctx, {
    metadata: {
      targetCommitId: commit.id,
      folderId: at.folderId,
      deepRollback: query.deepRollback,
      diffsCount: diffs.reduce((n, d) => n + d.changes.length, 0),
      environment: at.environment,
      folderPath: at.secretPath,
    },
  });
  return diffs;
};

type Applied = { approval: ChangeRequest } | { changes: number; commitIds: string[] };

/**
 * Carries out plans as the caller: rights on every step first; one folder a change policy protects
 * becomes a change request; a deep rollback reaching a protected folder is refused whole; otherwise
 * everything is written in one transaction, one new commit per folder named `message`.
 */
const carryOut = async (
  ctx: RequestContext,
  projectId: string,
  ability: Ability,
  key: DataKey | undefined,
  plans: readonly FolderPlan[],
  message: string,
  audit: (changes: number, commitIds: string[]) => Record<string, unknown>,
  mayRollback: (at: FolderAt) => void,
): Promise<Applied> => {
  const changing = plans.filter((p) => p.plan.length > 0);
  if (!key || changing.length === 0) {
    noteAudit(ctx, { metadata: audit(0, []) });
    return { changes: 0, commitIds: [] };
  }
  for (const p of changing) {
    mayRollback(p.at);
    assertMayApply(key, ability, p.at, p.plan);
  }
  if (plans.length === 1) {
    const [{ at, plan }] = changing as [FolderPlan];
    const approval = await ctx.deps.secretWriteGate.propose(
      ctx,
      { ...at, projectId, ability },
      proposedChangesOf(key, plan),
    );
    if (approval) return { approval };
  } else {
    const protectedPaths: string[] = [];
    for (const p of changing)
      await ctx.deps.secretWriteGate
        .assertUnprotected(ctx, projectId, p.at, "a deep rollback")
        .catch((error: unknown) => {
          if (!(error instanceof BadRequestError)) throw error;
          protectedPaths.push(`${p.at.environment}:${p.at.secretPath}`);
        });
    if (protectedPaths.length > 0)
      throw new BadRequestError(
        `A change policy protects ${protectedPaths.join(", ")}: a deep rollback is not allowed there; roll those folders back one by one`,
      );
  }
  return inTransaction(ctx, async (trx) => {
    await nameNextCommit(trx, message);
    const dataKey = await ensureProjectKey(ctx.deps, trx, projectId);
    let changes = 0;
    for (const p of changing) {
      const latest = await findLatestCommit(trx, p.at.folderId);
      if (latest?.id !== p.latestId) throw new BadRequestError(STALE);
      changes += await applyPlan(ctx, trx, dataKey, p.at, p.plan);
    }
    const commitIds = (await commitsOfThisTransaction(trx)).map((c) => c.id);
    noteAudit(ctx, { metadata: audit(changes, commitIds) });
    return { changes, commitIds };
  }).catch(asKeyConflict("The rollback would give two secrets of a folder the same name"));
};

/** Who may roll a folder back: `commits perform-rollback` where the folder is. */
const commitsRight = (ability: Ability) => (at: FolderAt) => assertCommitAction(ability, "perform-rollback", at);

export type RollbackTarget = { project: { id: string }; ability: Ability; at: FolderAt; commit: CommitRow };

/**
 * Puts a folder (with `deep`, its subtree) back as it was at a commit: the rollback route's and the
 * snapshot route's work. `mayRollback` is the right each rolled-back folder needs.
 */
export const rollbackFolder = async (
  ctx: RequestContext,
  { project, ability, at, commit }: RollbackTarget,
  options: { deep: boolean; message?: string; latestCommitId?: string; mayRollback?: (at: FolderAt) => void },
) => {
  const mayRollback = options.mayRollback ?? commitsRight(ability);
  mayRollback(at);
  const { key, plans } = await plansFor(ctx, project.id, at, commit, options.deep);
  if (options.latestCommitId !== undefined && options.latestCommitId !== plans[0]!.latestId)
    throw new BadRequestError(STALE);
  const message = options.message || (options.deep ? "Deep rollback" : "Rollback to previous commit");
  const audit = (totalChanges: number) => ({
    targetCommitId: commit.id,
    environment: at.environment,
    folderId: at.folderId,
    deepRollback: options.deep,
    message,
    totalChanges,
  });
  return carryOut(ctx, project.id, ability, key, plans, message, audit, mayRollback);
};

/** POST /api/v1/pit/commits/:commitId/rollback */
export const rollbackToCommit = async (
  ctx: RequestContext,
  body: PlaceRef & { folderId: string; deepRollback: boolean; message?: string; latestCommitId?: string },
  commitId: string,
) => {
  const target = await targetOf(ctx, body, commitId);
  const applied = await rollbackFolder(ctx, target, {
    deep: body.deepRollback,
    message: body.message,
    latestCommitId: body.latestCommitId,
  });
  if ("approval" in applied) return applied;
  return {
    success: true,
    secretChangesCount: applied.changes,
    folderChangesCount: 0,
    totalChanges: applied.changes,
    commitIds: applied.commitIds,
  };
};

/** The inverse of one commit's changes, where they still apply to the folder as it is. */
const revertPlan = async (ctx: RequestContext, key: DataKey, at: FolderAt, commit: CommitRow) => {
  const latest = (await findLatestCommit(ctx.deps.db, at.folderId))!;
  const now = await folderStateAt(ctx.deps.db, at.folderId, latest.seq);
  const byId = new Map(now.map((r) => [r.secret_id, r]));
  const names = new Set(now.map((r) => r.key));
  const plan: PlanItem[] = [];
  for (const { row, before } of await listCommitVersions(ctx.deps.db, commit.seq)) {
    if (row.folder_id !== at.folderId) continue;
    const current = byId.get(row.secret_id);
    const wasLive = before !== undefined && !before.is_deleted && before.folder_id === at.folderId;
    if (row.is_deleted) {
      const target = before ?? row;
      if (!current && !names.has(target.key)) plan.push({ kind: "create", secretId: row.secret_id, target });
    } else if (!current) continue;
    else if (!wasLive) plan.push({ kind: "delete", secretId: row.secret_id, current });
    else if (!sameContent(key, current, before))
      plan.push({ kind: "update", secretId: row.secret_id, current, target: before });
  }
  return { at, latestId: latest.id, plan };
};

/** POST /api/v1/pit/commits/:commitId/revert */
export const revertCommit = async (ctx: RequestContext, ref: ProjectRef, commitId: string) => {
  const { project, ability, commit, at } = await commitOf(ctx, ref, commitId);
  assertCommitAction(ability, "read", at);
  assertCommitAction(ability, "perform-rollback", at);
  if (!(await findPreviousCommit(ctx.deps.db, at.folderId, commit.seq)))
    throw new BadRequestError("Cannot revert the first commit");
  const key = await findProjectKey(ctx.deps, project.id);
  const folderPlan = key ? await revertPlan(ctx, key, at, commit) : { at, latestId: undefined, plan: [] };
  if (folderPlan.plan.length === 0) throw new BadRequestError("No changes to revert");
  const applied = await carryOut(
    ctx,
    project.id,
    ability,
    key,
    [folderPlan],
    "Revert commit changes",
    (n, ids) => ({
      commitId: commit.id,
      revertCommitId: ids[0],
      changesReverted: n,
    }),
    commitsRight(ability),
  );
  if ("approval" in applied) return applied;
  const revertCommitId = applied.commitIds[0];
  return {
    success: true,
    message: "Commit reverted successfully",
    originalCommitId: commit.id,
    ...(revertCommitId ? { revertCommitId } : {}),
    changesReverted: applied.changes,
  };
};
