import type { FolderCommit } from "@keyward/contract";
import { noteAudit, type RequestContext } from "../../../context";
import { NotFoundError } from "../../../errors";
import { toIso } from "../../../lib/dates";
import { principalNames } from "../../authz/principals";
import type { PrincipalRef } from "../../authz/principals";
import { findProjectKey } from "../../project-keys/project-key.service";
import { openVersionRow } from "../secret-crypto";
import type { ProjectRef } from "../secret-access";
import { assertCommitAction, commitOf, folderByPath, type PlaceRef } from "./commit-access";
import { contentOf } from "./commit-plan";
import {
  countCommits,
  findLatestCommit,
  folderStateAt,
  listCommitVersions,
  listCommits,
  type CommitRow,
} from "./commit.repository";
import type { Database } from "../../../db/database";
import { isFolderUpdate, listCommitFolderVersions, subfoldersAt } from "./folder-versions.repository";

const isPrincipal = (type: string | null) => type === "user" || type === "identity";

const capital = (text: string) => text.replace(/^./, (c) => c.toUpperCase());

/** "Secret Created", or "Secrets 2 created, 1 deleted"; undefined when nothing of the kind changed. */
const describe = (what: "Secret" | "Folder", counts: readonly [number, string][]) => {
  const parts = counts.filter(([n]) => n > 0);
  if (parts.length === 0) return undefined;
  if (parts.length === 1 && parts[0]![0] === 1) return `${what} ${capital(parts[0]![1])}`;
  return `${what}s ${parts.map(([n, done]) => `${n} ${done}`).join(", ")}`;
};

/** A commit's message: the one its writer gave, else what it did. */
const messageOf = (row: CommitRow) => {
  if (row.message) return row.message;
  const said = [
    describe("Secret", [
      [row.adds, "created"],
      [row.updates, "updated"],
      [row.deletes, "deleted"],
    ]),
    describe("Folder", [
      [row.folder_adds, "created"],
      [row.folder_updates, "renamed"],
      [row.folder_deletes, "deleted"],
    ]),
  ].filter((part) => part !== undefined);
  return said.length > 0 ? said.join("; ") : "No changes";
};

/** Who wrote each commit: a person's username or an identity's name, looked up once per list. */
const actorNames = async (db: Database, rows: readonly CommitRow[]) => {
  const refs = rows
    .filter((r) => r.actor_id && isPrincipal(r.actor_type))
    .map((r) => ({ type: r.actor_type, id: r.actor_id }) as PrincipalRef);
  return refs.length > 0 ? principalNames(db, refs) : new Map<string, { name: string }>();
};

const commitDto = (
  row: CommitRow,
  names: ReadonlyMap<string, { name: string }>,
  latestSeq: string | undefined,
): FolderCommit => ({
  id: row.id,
  commitId: String(row.seq),
  folderId: row.folder_id,
  envId: row.env_id,
  actorType: row.actor_type ?? "platform",
  actorMetadata: row.actor_id
    ? {
        id: row.actor_id,
        ...(names.get(`${row.actor_type}:${row.actor_id}`)
          ? { name: names.get(`${row.actor_type}:${row.actor_id}`)!.name }
          : {}),
      }
    : {},
  message: messageOf(row),
  createdAt: toIso(row.created_at),
  updatedAt: toIso(row.created_at),
  changesCount: row.adds + row.updates + row.deletes + row.folder_adds + row.folder_updates + row.folder_deletes,
  isLatest: String(row.seq) === latestSeq,
});

/** GET /api/v1/pit/commits/count */
export const countFolderCommits = async (ctx: RequestContext, query: PlaceRef & { path: string }) => {
  const { ability, at } = await folderByPath(ctx, query);
  assertCommitAction(ability, "read", at);
  const count = await countCommits(ctx.deps.db, at.folderId);
  noteAudit(ctx, { metadata: { commitCount: count } });
  return { count, folderId: at.folderId };
};

/** GET /api/v1/pit/commits: in commit order, newest first unless `sort=asc`. */
export const listFolderCommits = async (
  ctx: RequestContext,
  query: PlaceRef & { path: string; offset: number; limit: number; sort: "asc" | "desc"; search?: string },
) => {
  const { ability, at } = await folderByPath(ctx, query);
  assertCommitAction(ability, "read", at);
  const [rows, total, latest] = await Promise.all([
    listCommits(ctx.deps.db, at.folderId, query),
    countCommits(ctx.deps.db, at.folderId, query.search),
    findLatestCommit(ctx.deps.db, at.folderId),
  ]);
  const names = await actorNames(ctx.deps.db, rows);
  noteAudit(ctx, {
    metadata: {
      commitCount: total,
      offset: query.offset,
      limit: query.limit,
      sort: query.sort,
      ...(query.search ? { search: query.search } : {}),
    },
  });
  return {
    commits: rows.map((r) => commitDto(r, names, latest && String(latest.seq))),
    total,
    hasMore: query.offset + rows.length < total,
  };
};

/**
 * GET /api/v1/pit/commits/:commitId/changes: each secret version the commit wrote (values masked without
 * read-value), then each subfolder it added, renamed or deleted.
 */
export const getCommitChanges = async (ctx: RequestContext, ref: ProjectRef, commitId: string) => {
  const { project, ability, commit, at } = await commitOf(ctx, ref, commitId);
  assertCommitAction(ability, "read", at);
  const [versions, folderVersions, key, names] = await Promise.all([
    listCommitVersions(ctx.deps.db, commit.seq),
    listCommitFolderVersions(ctx.deps.db, commit.folder_id, commit.seq),
    findProjectKey(ctx.deps, project.id),
    actorNames(ctx.deps.db, [commit]),
  ]);
  const dto = commitDto(commit, names, undefined);
  const secretChanges = versions.map(({ row, before }) => {
    const isUpdate =
      !row.is_deleted && before !== undefined && !before.is_deleted && before.folder_id === row.folder_id;
    const shown = [row, ...(isUpdate ? [before] : [])];
    return {
      id: row.id,
      folderCommitId: commit.id,
      changeType: row.is_deleted ? ("delete" as const) : ("add" as const),
      isUpdate,
      resourceType: "secret" as const,
      secretVersionId: row.id,
      secretId: row.secret_id,
      secretKey: row.key,
      secretVersion: String(row.version),
      folderId: row.folder_id,
      actorType: dto.actorType,
      actorMetadata: dto.actorMetadata,
      message: dto.message,
      createdAt: toIso(row.created_at),
      updatedAt: toIso(row.created_at),
      versions: key ? shown.map((v) => contentOf(openVersionRow(key, v, v.id), ability, at)) : [],
    };
  });
  const folderChanges = folderVersions.map(({ row, before }) => {
    const isUpdate = isFolderUpdate(row, before);
    return {
      id: row.id,
      folderCommitId: commit.id,
      changeType: row.is_deleted ? ("delete" as const) : ("add" as const),
      isUpdate,
      resourceType: "folder" as const,
      folderVersionId: row.id,
      folderChangeId: row.folder_id,
      folderName: row.name,
      folderVersion: String(row.version),
      folderId: commit.folder_id,
      actorType: dto.actorType,
      actorMetadata: dto.actorMetadata,
      message: dto.message,
      createdAt: toIso(row.created_at),
      updatedAt: toIso(row.created_at),
      versions: [row, ...(isUpdate && before ? [before] : [])].map((v) => ({
        version: String(v.version),
        name: v.name,
      })),
    };
  });
  const changes = [...secretChanges, ...folderChanges];
  noteAudit(ctx, { metadata: { commitId: commit.id, changesCount: changes.length } });
  const { changesCount: _count, isLatest: _latest, ...fields } = dto;
  return { changes: { ...fields, changes } };
};

/** GET /api/v1/pit/commits/:commitId?folderId: the folder's secrets and subfolders (names and versions) at that commit. */
export const getFolderStateAt = async (
  ctx: RequestContext,
  ref: ProjectRef & { folderId: string },
  commitId: string,
) => {
  const { ability, commit, at } = await commitOf(ctx, ref, commitId);
  if (commit.folder_id !== ref.folderId) throw new NotFoundError(`Commit with ID ${commitId} not found`);
  assertCommitAction(ability, "read", at);
  const [rows, folders] = await Promise.all([
    folderStateAt(ctx.deps.db, at.folderId, commit.seq),
    subfoldersAt(ctx.deps.db, at.folderId, commit.seq),
  ]);
  noteAudit(ctx, {
    metadata: { commitId: commit.id, folderId: at.folderId, resourceCount: rows.length + folders.length },
  });
  return [
    ...rows.map((r) => ({
      type: "secret" as const,
      id: r.secret_id,
      versionId: r.id,
      secretKey: r.key,
      secretVersion: r.version,
    })),
    ...folders.map((f) => ({
      type: "folder" as const,
      id: f.folder_id,
      versionId: f.id,
      folderName: f.name,
      folderVersion: f.version,
    })),
  ];
};
