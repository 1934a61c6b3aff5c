import { SECRET_VALUE_HIDDEN_MASK } from "@keyward/contract";
import type { RequestContext } from "../../../context";
import { PermissionDeniedError } from "../../../errors";
import { toIso } from "../../../lib/dates";
import type { Ability } from "../../../permissions";
import { lookupEnvironmentBySlug } from "../../folders/folder.service";
import { findProjectKey } from "../../project-keys/project-key.service";
import { canReadValue, secretObject } from "../secret-access";
import { openVersionRow } from "../secret-crypto";
import { toSecretRaw } from "../secret.dto";
import { commitOf, folderByPath } from "./commit-access";
import type { FolderAt } from "./commit-plan";
import { rollbackFolder } from "./commit-rollback";
import { countCommits, folderStateAt, listCommits, type CommitRow } from "./commit.repository";
import { subfoldersAt } from "./folder-versions.repository";

/**
 * The older snapshot API as views over commits: a snapshot is a commit of a folder, its id the
 * commit's. Reading one needs `commits read` where the folder is or `secret-rollback read`; rolling
 * back to one `commits perform-rollback` or `secret-rollback create`, as a folder rollback.
 */
const mayRead = (ability: Ability, at: FolderAt) => {
  if (!ability.can("read", "commits", at) && !ability.can("read", "secret-rollback"))
    throw new PermissionDeniedError("read", "commits", ability.rulesFor("read", "commits"));
};

const mayRollback = (ability: Ability) => (at: FolderAt) => {
  if (!ability.can("perform-rollback", "commits", at) && !ability.can("create", "secret-rollback"))
    throw new PermissionDeniedError("perform-rollback", "commits", ability.rulesFor("perform-rollback", "commits"));
};

const snapshotOf = (row: CommitRow) => ({
  id: row.id,
  envId: row.env_id,
  folderId: row.folder_id,
  parentFolderId: row.parent_id,
  createdAt: toIso(row.created_at),
  updatedAt: toIso(row.created_at),
});

type FolderQuery = { environment: string; path: string };

/** GET /api/v1/workspace/:workspaceId/secret-snapshots: newest first. */
export const listSnapshots = async (
  ctx: RequestContext,
  projectId: string,
  query: FolderQuery & { offset: number; limit: number },
) => {
  const { ability, at } = await folderByPath(ctx, { projectId, ...query });
  mayRead(ability, at);
  const rows = await listCommits(ctx.deps.db, at.folderId, { ...query, sort: "desc" });
  return { secretSnapshots: rows.map(snapshotOf) };
};

/** GET /api/v1/workspace/:workspaceId/secret-snapshots/count */
export const countSnapshots = async (ctx: RequestContext, projectId: string, query: FolderQuery) => {
  const { ability, at } = await folderByPath(ctx, { projectId, ...query });
  mayRead(ability, at);
  return { count: await countCommits(ctx.deps.db, at.folderId) };
};

/** The commit behind a snapshot id, in the caller's organization: 404 otherwise. */
const snapshotTarget = (ctx: RequestContext, snapshotId: string) =>
  commitOf(ctx, undefined, snapshotId, `Secret snapshot with ID '${snapshotId}' not found`);

/** GET /api/v1/secret-snapshot/:secretSnapshotId: the folder's secrets and subfolders at that commit. */
export const getSnapshot = async (ctx: RequestContext, snapshotId: string) => {
  const { project, ability, commit, at } = await snapshotTarget(ctx, snapshotId);
  mayRead(ability, at);
  const [rows, subfolders, key, env] = await Promise.all([
    folderStateAt(ctx.deps.db, at.folderId, commit.seq),
    subfoldersAt(ctx.deps.db, at.folderId, commit.seq),
    findProjectKey(ctx.deps, project.id),
    lookupEnvironmentBySlug(ctx.deps.db, project.id, at.environment),
  ]);
  const dtoPlace = { projectId: project.id, environment: at.environment, secretPath: at.secretPath };
  const secretVersions = key
    ? rows.map((row) => {
        const version = openVersionRow(key, row, row.id);
        const object = secretObject(
          at.environment,
          at.secretPath,
          row.key,
          row.tags.map((t) => t.slug),
        );
        const readable = canReadValue(ability, object);
        return {
          ...toSecretRaw(version, dtoPlace, readable ? version.value() : SECRET_VALUE_HIDDEN_MASK),
          secretId: row.secret_id,
          secretValueHidden: !readable,
          isDeleted: false,
        };
      })
    : [];
  return {
    secretSnapshot: {
      ...snapshotOf(commit),
      projectId: project.id,
      environment: { id: env!.id, slug: env!.slug, name: env!.name },
      secretVersions,
      folderVersion: subfolders.map((f) => ({ id: f.folder_id, name: f.name })),
    },
  };
};

/** POST /api/v1/secret-snapshot/:secretSnapshotId/rollback: a folder rollback to the snapshot's commit. */
export const rollbackToSnapshot = async (ctx: RequestContext, snapshotId: string) => {
  const target = await snapshotTarget(ctx, snapshotId);
  const applied = await rollbackFolder(ctx, target, {
    deep: false,
    message: "Rollback to snapshot",
    mayRollback: mayRollback(target.ability),
  });
  if ("approval" in applied) return applied;
  return { secretSnapshot: snapshotOf(target.commit) };
};
