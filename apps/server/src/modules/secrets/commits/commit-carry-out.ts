import { inTransaction } from "../../../db/transaction";
import type { ChangeRequest } from "@keyward/contract";
import { noteAudit, type RequestContext } from "../../../context";
import type { DataKey } from "../../../crypto/data-keys";
import { BadRequestError } from "../../../errors";
import type { Ability } from "../../../permissions";
import { lockFolderForChanges } from "../../folders/folder.service";
import { ensureProjectKey } from "../../project-keys/project-key.service";
import { asKeyConflict } from "../secret-persist";
import { STALE, applyPlan, assertMayApply, proposedChangesOf } from "./commit-apply";
import type { FolderAt, PlanItem } from "./commit-plan";
import { commitsOfThisTransaction, findLatestCommit, nameNextCommit } from "./commit.repository";
import { applyFolderItems } from "./folder-apply";
import { assertMayChangeFolders, restoredFolders, type FolderItem } from "./folder-plan";

/** One folder's steps back: its secrets' and its subfolders', against the newest commit they were planned from. */
export type FolderPlan = { at: FolderAt; latestId: string | undefined; plan: PlanItem[]; folders: FolderItem[] };

export type Counted = { secrets: number; folders: number; commitIds: string[] };
export type Applied = { approval: ChangeRequest } | Counted;

type Audit = (changes: number, commitIds: string[]) => Record<string, unknown>;

const stepsOf = (p: FolderPlan) => p.plan.length + p.folders.length;

/** Where a change policy protects the folder from direct writes by this caller. */
export const isProtected = (ctx: RequestContext, projectId: string, at: FolderAt) =>
  ctx.deps.secretWriteGate.assertUnprotected(ctx, projectId, at, "a direct write").then(
    () => false,
    (error: unknown) => {
      if (error instanceof BadRequestError) return true;
      throw error;
    },
  );

/** Everything of the plans in one transaction, one new commit per folder named `message`. */
const write = (ctx: RequestContext, projectId: string, plans: readonly FolderPlan[], message: string, audit: Audit) =>
  inTransaction(ctx, async (trx): Promise<Counted> => {
    await nameNextCommit(trx, message);
    const dataKey = await ensureProjectKey(ctx.deps, trx, projectId);
    const counted: Counted = { secrets: 0, folders: 0, commitIds: [] };
    for (const p of plans) {
      if (p.folders.length > 0) await lockFolderForChanges(trx, p.at.folderId);
      const latest = await findLatestCommit(trx, p.at.folderId);
      if (latest?.id !== p.latestId) throw new BadRequestError(STALE);
      const folders = await applyFolderItems(ctx, trx, dataKey, p.at, p.folders);
      if (p.plan.length > 0) counted.secrets += await applyPlan(ctx, trx, dataKey, p.at, p.plan);
      counted.secrets += folders.secrets;
      counted.folders += folders.folders;
    }
    counted.commitIds = (await commitsOfThisTransaction(trx)).map((c) => c.id);
    noteAudit(ctx, { metadata: audit(counted.secrets + counted.folders, counted.commitIds) });
    return counted;
  }).catch(asKeyConflict("The rollback would give two secrets or two subfolders of a folder the same name"));

/**
 * Carries out plans as the caller: rights on every step first (a rollback is never a way around the
 * rights on secrets or folders). In one folder a change policy protects, the subfolder steps are written
 * at once (no change policy holds folders back) and the secret steps become a change request. A deep
 * rollback reaching a protected folder is refused whole, as is a re-created folder landing in one.
 * Otherwise everything is written in one transaction.
 */
export const carryOut = async (
  ctx: RequestContext,
  projectId: string,
  ability: Ability,
  key: DataKey | undefined,
  plans: readonly FolderPlan[],
  message: string,
  audit: Audit,
  mayRollback: (at: FolderAt) => void,
): Promise<Applied> => {
  const changing = plans.filter((p) => stepsOf(p) > 0);
  if (changing.length === 0) {
    noteAudit(ctx, { metadata: audit(0, []) });
    return { secrets: 0, folders: 0, commitIds: [] };
  }
  for (const p of changing) {
    mayRollback(p.at);
    if (key) assertMayApply(key, ability, p.at, p.plan);
    assertMayChangeFolders(key, ability, p.at, p.folders);
    // Filling a re-created folder rolls that folder back too: the right is judged where it lands.
    for (const restore of restoredFolders(p.folders)) if (restore.secrets.length > 0) mayRollback(restore.at);
  }
  const refused: string[] = [];
  const filled = changing.flatMap((p) => restoredFolders(p.folders)).filter((r) => r.secrets.length > 0);
  for (const restore of filled)
    if (await isProtected(ctx, projectId, restore.at))
      refused.push(`${restore.at.environment}:${restore.at.secretPath}`);
  if (plans.length > 1)
    for (const p of changing)
      if (await isProtected(ctx, projectId, p.at)) refused.push(`${p.at.environment}:${p.at.secretPath}`);
  if (refused.length > 0)
    throw new BadRequestError(
      `A change policy protects ${refused.join(", ")}: a rollback may not write secrets there at once; roll those folders back one by one`,
    );
  if (plans.length === 1) {
    const [p] = changing as [FolderPlan];
    if (key && p.plan.length > 0 && (await isProtected(ctx, projectId, p.at))) {
      if (p.folders.length > 0) await write(ctx, projectId, [{ ...p, plan: [] }], message, audit);
      const approval = await ctx.deps.secretWriteGate.propose(
        ctx,
        { ...p.at, projectId, ability },
        proposedChangesOf(key, p.plan),
      );
      if (approval) return { approval };
    }
  }
  return write(ctx, projectId, changing, message, audit);
};
