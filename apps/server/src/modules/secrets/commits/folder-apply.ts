import type { Tx } from "../../../db/transaction";
import type { RequestContext } from "../../../context";
import type { DataKey } from "../../../crypto/data-keys";
import { BadRequestError } from "../../../errors";
import {
  lockLiveFolders,
  nameFolderWriter,
  reinsertFolder,
  removeFolderRow,
  restoreFolderName,
} from "../../folders/folder.service";
import { insertNewSecrets, newSecretId, recordGone } from "../secret-persist";
import { lockSecretsByIds } from "../secret.repository";
import { STALE, stateFromVersion } from "./commit-apply";
import { lastVersionNumbers } from "./commit.repository";
import type { FolderAt } from "./commit-plan";
import type { FolderItem, Restore } from "./folder-plan";
import { recordFolderGone } from "./folder-versions.repository";

/** What a folder's steps changed: subfolders, and the secrets re-created folders got back. */
export type FolderApplied = { folders: number; secrets: number };

/**
 * Fills a re-created folder as it was: its secrets under their old ids (new ones when an id now lives
 * elsewhere) as version last+1, its subfolders the same way, and deletion versions for what its history
 * still placed in it but stays gone.
 */
const fill = async (ctx: RequestContext, trx: Tx, key: DataKey, restore: Restore): Promise<FolderApplied> => {
  const folderId = restore.version.folder_id;
  const [last, taken] = await Promise.all([
    lastVersionNumbers(
      trx,
      [...restore.secrets, ...restore.goneSecrets].map((s) => s.secret_id),
    ),
    lockSecretsByIds(
      trx,
      restore.secrets.map((s) => s.secret_id),
    ),
  ]);
  const elsewhere = new Set(taken.map((row) => row.id));
  await recordGone(
    ctx,
    trx,
    key,
    restore.goneSecrets.map((s) => ({
      state: stateFromVersion(key, s, s.secret_id, folderId),
      version: last.get(s.secret_id) ?? s.version,
    })),
  );
  const states = restore.secrets.map((s) =>
    stateFromVersion(key, s, elsewhere.has(s.secret_id) ? newSecretId() : s.secret_id, folderId),
  );
  const versions = new Map(states.flatMap((s) => (last.has(s.id) ? [[s.id, last.get(s.id)! + 1] as const] : [])));
  await insertNewSecrets(ctx, trx, key, states, versions);
  const applied = { folders: 0, secrets: states.length };
  for (const child of restore.children) {
    await reinsertFolder(trx, child.version, folderId);
    const below = await fill(ctx, trx, key, child);
    applied.folders += 1 + below.folders;
    applied.secrets += below.secrets;
  }
  await recordFolderGone(trx, restore.goneFolders);
  return applied;
};

/**
 * Applies a folder's subfolder steps inside the caller's transaction: each subfolder must still be as
 * the plan saw it (else 400, nothing written). Deletions (with their subtrees), renames, then
 * re-creations under their old ids with their contents.
 */
export const applyFolderItems = async (
  ctx: RequestContext,
  trx: Tx,
  key: DataKey,
  at: FolderAt,
  items: readonly FolderItem[],
): Promise<FolderApplied> => {
  const applied = { folders: items.length, secrets: 0 };
  if (items.length === 0) return applied;
  await nameFolderWriter(trx, ctx.actor);
  const live = await lockLiveFolders(
    trx,
    items.map((item) => item.folderId),
  );
  for (const item of items) {
    const row = live.get(item.folderId);
    const stale =
      item.kind === "create"
        ? row !== undefined
        : !row || row.parent_id !== at.folderId || row.name !== item.current.name;
    if (stale) throw new BadRequestError(STALE);
  }
  for (const item of items) if (item.kind === "delete") await removeFolderRow(trx, item.folderId);
  for (const item of items) if (item.kind === "update") await restoreFolderName(trx, item.folderId, item.target);
  for (const item of items) {
    if (item.kind !== "create") continue;
    await reinsertFolder(trx, item.target, at.folderId);
    const below = await fill(ctx, trx, key, item.restore);
    applied.folders += below.folders;
    applied.secrets += below.secrets;
  }
  return applied;
};
