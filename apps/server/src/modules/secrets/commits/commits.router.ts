import { initServer } from "@ts-rest/express";
import { contract } from "@keyward/contract";
import type { AppDeps } from "../../../context";
import { contextOf } from "../../../http/authenticate";
import { ok } from "../../../http/respond";
import { countFolderCommits, getCommitChanges, getFolderStateAt, listFolderCommits } from "./commit.service";
import { compareCommit, revertCommit, rollbackToCommit } from "./commit-rollback";
import { written } from "../secrets.router";
import { batchCommit } from "./commit-batch";
import { countSnapshots, getSnapshot, listSnapshots, rollbackToSnapshot } from "./commit-snapshots";

const s = initServer();

export const pitRouter = (deps: AppDeps) =>
  s.router(contract.pit, {
    batchCommit: async ({ body, req, res }) => {
      const done = await batchCommit(contextOf(deps, req, res), body);
      if ("approval" in done && done.approval) res.setHeader("X-Keyward-Change-Request", done.approval.id);
      return ok(done);
    },
    count: async ({ query, req, res }) => ok(await countFolderCommits(contextOf(deps, req, res), query)),
    list: async ({ query, req, res }) => ok(await listFolderCommits(contextOf(deps, req, res), query)),
    changes: async ({ params, query, req, res }) =>
      ok(await getCommitChanges(contextOf(deps, req, res), query, params.commitId)),
    compare: async ({ params, query, req, res }) =>
      ok(await compareCommit(contextOf(deps, req, res), query, params.commitId)),
    rollback: async ({ params, body, req, res }) =>
      written(res, await rollbackToCommit(contextOf(deps, req, res), body, params.commitId)),
    revert: async ({ params, query, body, req, res }) =>
      written(
        res,
        await revertCommit(
          contextOf(deps, req, res),
          { projectId: body?.projectId, workspaceId: query.workspaceId },
          params.commitId,
        ),
      ),
    state: async ({ params, query, req, res }) =>
      ok(await getFolderStateAt(contextOf(deps, req, res), query, params.commitId)),
  });

/** The older snapshot routes, served as views over commits. */
export const secretSnapshotsRouter = (deps: AppDeps) =>
  s.router(contract.secretSnapshots, {
    list: async ({ params, query, req, res }) =>
      ok(await listSnapshots(contextOf(deps, req, res), params.workspaceId, query)),
    count: async ({ params, query, req, res }) =>
      ok(await countSnapshots(contextOf(deps, req, res), params.workspaceId, query)),
    get: async ({ params, req, res }) => ok(await getSnapshot(contextOf(deps, req, res), params.secretSnapshotId)),
    rollback: async ({ params, req, res }) =>
      written(res, await rollbackToSnapshot(contextOf(deps, req, res), params.secretSnapshotId)),
  });
