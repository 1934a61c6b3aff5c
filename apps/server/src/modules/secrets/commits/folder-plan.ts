import type { ResourceChange } from "@keyward/contract";
import type { Database } from "../../../db/database";
import type { DataKey } from "../../../crypto/data-keys";
import { UnprocessableEntityError } from "../../../errors";
import type { Ability } from "../../../permissions";
import { assertCan } from "../../authz/guard";
import type { VersionRow } from "../versions/version.repository";
import { assertMayApply } from "./commit-apply";
import type { FolderAt, PlanItem } from "./commit-plan";
import { findLatestCommit, folderStateAt } from "./commit.repository";
import { subfoldersAt, type FolderVersionRow } from "./folder-versions.repository";

/** A re-created folder is rebuilt at most this deep below the rolled-back one. */
export const MAX_RESTORE_DEPTH = 20;

/**
 * What a re-created folder gets back: its secrets and subfolders as they were at the target, and the
 * secrets and subfolders its history still places in it (they went with it) that stay gone.
 */
export type Restore = {
  version: FolderVersionRow;
  at: FolderAt;
  secrets: VersionRow[];
  goneSecrets: VersionRow[];
  children: Restore[];
  goneFolders: FolderVersionRow[];
};

/** What putting a folder back does to one of its subfolders (a deletion takes the subfolder's subtree). */
export type FolderItem =
  | { kind: "delete"; folderId: string; current: FolderVersionRow }
  | { kind: "update"; folderId: string; current: FolderVersionRow; target: FolderVersionRow }
  | { kind: "create"; folderId: string; target: FolderVersionRow; restore: Restore };

/** How many folders one rollback may re-create in all. */
export type RestoreBudget = { folders: number };

export const childPath = (parentPath: string, name: string) =>
  parentPath === "/" ? `/${name}` : `${parentPath}/${name}`;

/** The contents a folder gone since gets back when it is re-created as it was at `seq`. */
export const planRestore = async (
  db: Database,
  version: FolderVersionRow,
  at: FolderAt,
  seq: string,
  depth: number,
  budget: RestoreBudget,
): Promise<Restore> => {
  budget.folders -= 1;
  if (depth > MAX_RESTORE_DEPTH || budget.folders < 0)
    throw new UnprocessableEntityError(
      `A rollback re-creates at most ${MAX_RESTORE_DEPTH} levels of folders and a bounded number of them; roll back smaller subtrees`,
    );
  // Its history goes on where it stopped: everything it held when it went, as a gone folder keeps it.
  const last = (await findLatestCommit(db, version.folder_id))?.seq ?? seq;
  const [secrets, held, subfolders, heldFolders] = await Promise.all([
    folderStateAt(db, version.folder_id, seq),
    folderStateAt(db, version.folder_id, last),
    subfoldersAt(db, version.folder_id, seq),
    subfoldersAt(db, version.folder_id, last),
  ]);
  const back = new Set(secrets.map((s) => s.secret_id));
  const foldersBack = new Set(subfolders.map((f) => f.folder_id));
  const children: Restore[] = [];
  for (const child of subfolders)
    children.push(
      await planRestore(
        db,
        child,
        { ...at, folderId: child.folder_id, secretPath: childPath(at.secretPath, child.name) },
        seq,
        depth + 1,
        budget,
      ),
    );
  return {
    version,
    at,
    secrets,
    goneSecrets: held.filter((s) => !back.has(s.secret_id)),
    children,
    goneFolders: heldFolders.filter((f) => !foldersBack.has(f.folder_id)),
  };
};

const sameFolder = (a: FolderVersionRow, b: FolderVersionRow) => a.name === b.name && a.description === b.description;

/**
 * The steps from a folder's subfolders as they are (its newest commit `latestSeq`) to those at `seq`:
 * deletions, then renames, then re-creations with their contents as they were at `contentSeq`.
 */
export const planSubfolders = async (
  db: Database,
  at: FolderAt,
  { latestSeq, seq, contentSeq }: { latestSeq: string; seq: string; contentSeq: string },
  budget: RestoreBudget,
): Promise<FolderItem[]> => {
  const [now, then] = await Promise.all([subfoldersAt(db, at.folderId, latestSeq), subfoldersAt(db, at.folderId, seq)]);
  const current = new Map(now.map((f) => [f.folder_id, f]));
  const target = new Set(then.map((f) => f.folder_id));
  const items: FolderItem[] = now
    .filter((f) => !target.has(f.folder_id))
    .map((f) => ({ kind: "delete", folderId: f.folder_id, current: f }));
  const creates: FolderItem[] = [];
  for (const t of then) {
    const c = current.get(t.folder_id);
    if (c && !sameFolder(c, t)) items.push({ kind: "update", folderId: t.folder_id, current: c, target: t });
    if (c) continue;
    const restoredAt = { ...at, folderId: t.folder_id, secretPath: childPath(at.secretPath, t.name) };
    creates.push({
      kind: "create",
      folderId: t.folder_id,
      target: t,
      restore: await planRestore(db, t, restoredAt, contentSeq, 1, budget),
    });
  }
  return [...items, ...creates];
};

/** The secrets a re-created folder gets back, as plan steps. */
export const restoredSecrets = (restore: Restore): PlanItem[] =>
  restore.secrets.map((target) => ({ kind: "create", secretId: target.secret_id, target }));

/** Each re-created folder of the steps, with its path, depth first. */
export const restoredFolders = (items: readonly FolderItem[]): Restore[] => {
  const out: Restore[] = [];
  const walk = (r: Restore) => {
    out.push(r);
    r.children.forEach(walk);
  };
  for (const item of items) if (item.kind === "create") walk(item.restore);
  return out;
};

/**
 * The caller must be able to make each folder change itself, as the folder routes ask (create, edit or
 * delete on `secret-folders` where the folder is), and to create every secret a re-created folder gets.
 */
export const assertMayChangeFolders = (
  key: DataKey | undefined,
  ability: Ability,
  at: FolderAt,
  items: readonly FolderItem[],
) => {
  const action = { delete: "delete", update: "edit", create: "create" } as const;
  for (const item of items)
    assertCan(ability, action[item.kind], "secret-folders", { environment: at.environment, secretPath: at.secretPath });
  for (const restore of restoredFolders(items)) {
    if (restore.children.length > 0)
      assertCan(ability, "create", "secret-folders", {
        environment: restore.at.environment,
        secretPath: restore.at.secretPath,
      });
    if (key) assertMayApply(key, ability, restore.at, restoredSecrets(restore));
  }
};

/** The subfolders a re-created folder gets back, as steps. */
export const restoredChildren = (restore: Restore): FolderItem[] =>
  restore.children.map((c) => ({ kind: "create", folderId: c.version.folder_id, target: c.version, restore: c }));

/** A folder step as the compare route answers it. */
export const folderChangeOf = (item: FolderItem, commitId: string): ResourceChange => {
  const shown = item.kind === "delete" ? item.current : item.target;
  return {
    type: "folder",
    id: item.folderId,
    versionId: shown.id,
    ...(item.kind === "update" ? { oldVersionId: item.current.id, fromVersion: String(item.current.version) } : {}),
    changeType: item.kind,
    commitId,
    folderName: shown.name,
    folderVersion: String(shown.version),
    versions: [
      { version: String(shown.version), name: shown.name },
      ...(item.kind === "update" ? [{ version: String(item.current.version), name: item.current.name }] : []),
    ],
  };
};
