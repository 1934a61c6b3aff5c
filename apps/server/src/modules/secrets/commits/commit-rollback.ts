import type { RequestContext } from "../../../context";
import { noteAudit } from "../../../context";
import type { DataKey } from "../../../crypto/data-keys";
import { BadRequestError, NotFoundError, UnprocessableEntityError } from "../../../errors";
import type { Ability } from "../../../permissions";
import { lookupDescendantFolders } from "../../folders/folder.service";
import { findProjectKey } from "../../project-keys/project-key.service";
import type { ProjectRef } from "../secret-access";
import { assertCommitAction, commitOf, folderById, type PlaceRef } from "./commit-access";
import { STALE } from "./commit-apply";
import { carryOut, type FolderPlan } from "./commit-carry-out";
import { planBetween, resourceChangeOf, sameContent, type FolderAt, type PlanItem } from "./commit-plan";
import {
  findCommit,
  findLatestCommit,
  findPreviousCommit,
  folderStateAt,
  lastMomentOf,
  listCommitVersions,
  type CommitRow,
} from "./commit.repository";
import {
  childPath,
  folderChangeOf,
  planRestore,
  planSubfolders,
  restoredChildren,
  restoredFolders,
  restoredSecrets,
  type FolderItem,
  type RestoreBudget,
} from "./folder-plan";
import { isFolderUpdate, listCommitFolderVersions, subfoldersAt } from "./folder-versions.repository";

/** A deep rollback reaches at most this many folders below its own. */
const MAX_DEEP_FOLDERS = 200;

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

/**
 * The steps that put one folder back as it was once commit `seq` was written: secrets and subfolders,
 * a re-created subfolder with its contents as they were at `contentSeq`.
 */
const planFolder = async (
  ctx: RequestContext,
  key: DataKey | undefined,
  at: FolderAt,
  { seq, contentSeq }: { seq: string; contentSeq: string },
  budget: RestoreBudget,
): Promise<FolderPlan> => {
  const latest = await findLatestCommit(ctx.deps.db, at.folderId);
  if (!latest) return { at, latestId: undefined, plan: [], folders: [] };
  const [current, target, folders] = await Promise.all([
    key ? folderStateAt(ctx.deps.db, at.folderId, latest.seq) : [],
    key ? folderStateAt(ctx.deps.db, at.folderId, seq) : [],
    planSubfolders(ctx.deps.db, at, { latestSeq: latest.seq, seq, contentSeq }, budget),
  ]);
  return { at, latestId: latest.id, plan: key ? planBetween(key, current, target) : [], folders };
};

/** A folder below one that the plans delete goes with it: it has nothing left to roll back. */
const withoutDeleted = (plans: readonly FolderPlan[]) => {
  const gone = plans.flatMap((p) =>
    p.folders.flatMap((item) => (item.kind === "delete" ? [childPath(p.at.secretPath, item.current.name)] : [])),
  );
  return plans.filter((p) => !gone.some((path) => p.at.secretPath === path || p.at.secretPath.startsWith(`${path}/`)));
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
  const budget: RestoreBudget = { folders: MAX_DEEP_FOLDERS };
  // Deep, the whole subtree goes back to the commit's moment. Otherwise a re-created subfolder comes
  // back as it was the last moment the folder was as the commit left it (for a subfolder deleted by the
  // folder's next commit: as it was when it went).
  const contentSeq = deep ? commit.seq : await lastMomentOf(ctx.deps.db, at.folderId, commit.seq);
  const plans: FolderPlan[] = [];
  for (const folder of folders) plans.push(await planFolder(ctx, key, folder, { seq: commit.seq, contentSeq }, budget));
  return { key, plans: withoutDeleted(plans) };
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
  const diffOf = (at: FolderAt, secrets: readonly PlanItem[], folders: readonly FolderItem[]) => ({
    folderId: at.folderId,
    folderName: folderNameOf(at.secretPath),
    folderPath: at.secretPath,
    changes: [
      ...(key ? secrets.map((item) => resourceChangeOf(key, item, ability, at, commit.id)) : []),
      ...folders.map((item) => folderChangeOf(item, commit.id)),
    ],
  });
  const diffs = plans
    .filter((p, i) => i === 0 || p.plan.length + p.folders.length > 0)
    .flatMap((p) => [
      diffOf(p.at, p.plan, p.folders),
      // What each re-created folder gets back.
      ...restoredFolders(p.folders).map((r) => diffOf(r.at, restoredSecrets(r), restoredChildren(r))),
    ]);
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
    secretChangesCount: applied.secrets,
    folderChangesCount: applied.folders,
    totalChanges: applied.secrets + applied.folders,
    commitIds: applied.commitIds,
  };
};

/** The inverse of one commit's subfolder changes, where they still apply to the folder as it is. */
const revertFolders = async (ctx: RequestContext, at: FolderAt, latestSeq: string, commit: CommitRow) => {
  const now = await subfoldersAt(ctx.deps.db, at.folderId, latestSeq);
  const byId = new Map(now.map((f) => [f.folder_id, f]));
  const names = new Set(now.map((f) => f.name));
  const budget: RestoreBudget = { folders: MAX_DEEP_FOLDERS };
  const items: FolderItem[] = [];
  for (const { row, before } of await listCommitFolderVersions(ctx.deps.db, at.folderId, commit.seq)) {
    const current = byId.get(row.folder_id);
    if (row.is_deleted) {
      if (current || !before || names.has(before.name)) continue;
      const restoredAt = { ...at, folderId: row.folder_id, secretPath: childPath(at.secretPath, before.name) };
      const restore = await planRestore(ctx.deps.db, before, restoredAt, commit.seq, 1, budget);
      items.push({ kind: "create", folderId: row.folder_id, target: before, restore });
    } else if (!current) continue;
    else if (!isFolderUpdate(row, before)) items.push({ kind: "delete", folderId: row.folder_id, current });
    else if (before && (current.name !== before.name || current.description !== before.description))
      items.push({ kind: "update", folderId: row.folder_id, current, target: before });
  }
  return items;
};

/** The inverse of one commit's changes, where they still apply to the folder as it is. */
const revertPlan = async (ctx: RequestContext, key: DataKey | undefined, at: FolderAt, commit: CommitRow) => {
  const latest = (await findLatestCommit(ctx.deps.db, at.folderId))!;
  const folders = await revertFolders(ctx, at, latest.seq, commit);
  const plan: PlanItem[] = [];
  if (!key) return { at, latestId: latest.id, plan, folders };
  const now = await folderStateAt(ctx.deps.db, at.folderId, latest.seq);
  const byId = new Map(now.map((r) => [r.secret_id, r]));
  const names = new Set(now.map((r) => r.key));
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
  return { at, latestId: latest.id, plan, folders };
};

/** POST /api/v1/pit/commits/:commitId/revert */
export const revertCommit = async (ctx: RequestContext, ref: ProjectRef, commitId: string) => {
  const { project, ability, commit, at } = await commitOf(ctx, ref, commitId);
  assertCommitAction(ability, "read", at);
  assertCommitAction(ability, "perform-rollback", at);
  if (!(await findPreviousCommit(ctx.deps.db, at.folderId, commit.seq)))
    throw new BadRequestError("Cannot revert the first commit");
  const key = await findProjectKey(ctx.deps, project.id);
  const folderPlan = await revertPlan(ctx, key, at, commit);
  if (folderPlan.plan.length + folderPlan.folders.length === 0) throw new BadRequestError("No changes to revert");
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
    changesReverted: applied.secrets + applied.folders,
  };
};
