import type { ServerInferRequest } from "@ts-rest/core";
import type { contract } from "@keyward/contract";
import { noteAudit, type RequestContext } from "../../../context";
import { inRolledBackTransaction, inTransaction } from "../../../db/transaction";
import { BadRequestError } from "../../../errors";
import { assertCan } from "../../authz/guard";
import { writeSubfolders, type SubfolderChanges } from "../../folders/folder.service";
import { applyChanges } from "../secret-apply";
import type { ProposedChange, ProposedTarget } from "../write-gate";
import { folderByPath } from "./commit-access";
import { isProtected } from "./commit-carry-out";
import type { FolderAt } from "./commit-plan";
import { commitsOfThisTransaction, nameNextCommit } from "./commit.repository";

type BatchCommitBody = ServerInferRequest<typeof contract.pit.batchCommit>["body"];

/** The secret changes in the order that lets one commit delete a key and create it again. */
const secretChangesOf = (secrets: BatchCommitBody["changes"]["secrets"]): ProposedChange[] => [
  ...(secrets?.delete ?? []).map((item): ProposedChange => ({ op: "delete", secretKey: item.secretKey })),
  ...(secrets?.update ?? []).map((item): ProposedChange => ({ op: "update", item })),
  ...(secrets?.create ?? []).map((item): ProposedChange => ({
    op: "create",
    item: { ...item, secretComment: item.secretComment ?? "" },
  })),
];

/** The subfolder steps need what the folder routes ask, where the commit's folder is. */
const assertMayChangeSubfolders = (ability: ProposedTarget["ability"], at: FolderAt, folders: SubfolderChanges) => {
  const where = { environment: at.environment, secretPath: at.secretPath };
  if (folders.create?.length) assertCan(ability, "create", "secret-folders", where);
  if (folders.update?.length) assertCan(ability, "edit", "secret-folders", where);
  if (folders.delete?.length) assertCan(ability, "delete", "secret-folders", where);
};

const countOf = (folders: SubfolderChanges) =>
  (folders.create?.length ?? 0) + (folders.update?.length ?? 0) + (folders.delete?.length ?? 0);

/** Keys and names only: an audit event never carries a value. */
const changedNames = (secrets: readonly ProposedChange[], folders: SubfolderChanges) => ({
  secretKeys: secrets.map((c) => (c.op === "delete" ? c.secretKey : c.item.secretKey)),
  folderNames: [...(folders.delete ?? []), ...(folders.update ?? []), ...(folders.create ?? [])].map(
    (f) => f.folderName,
  ),
});

/**
 * POST /api/v1/pit/batch/commit: secret and subfolder changes of one folder as one commit, each judged
 * as its own route would judge it. Where a change policy protects the folder (and does not let this
 * caller through), the subfolder changes are written at once (no policy holds folders back) and the
 * secret changes become one change request.
 */
export const batchCommit = async (ctx: RequestContext, body: BatchCommitBody) => {
  const { project, ability, at } = await folderByPath(ctx, { ...body, path: body.secretPath });
  const folders: SubfolderChanges = body.changes.folders ?? {};
  const secrets = secretChangesOf(body.changes.secrets);
  if (secrets.length + countOf(folders) === 0) throw new BadRequestError("A commit needs at least one change");
  assertMayChangeSubfolders(ability, at, folders);
  const target: ProposedTarget = { projectId: project.id, ability, ...at };
  const message = body.message ?? "";
  noteAudit(ctx, {
    metadata: {
      projectId: project.id,
      environment: at.environment,
      secretPath: at.secretPath,
      message,
      ...changedNames(secrets, folders),
    },
  });
  const write = (subfolders: SubfolderChanges, changes: readonly ProposedChange[], approvalId?: string) =>
    inTransaction(ctx, async (trx) => {
      if (message) await nameNextCommit(trx, message);
      if (countOf(subfolders) > 0) await writeSubfolders(ctx, trx, at.folderId, subfolders);
      if (changes.length > 0) await applyChanges(ctx, trx, target, changes);
      const commitId = (await commitsOfThisTransaction(trx)).find((c) => c.folder_id === at.folderId)?.id;
      noteAudit(ctx, {
        eventType: "pit-process-new-commit-raw",
        metadata: { ...(commitId ? { commitId } : {}), ...(approvalId ? { approvalId } : {}) },
      });
      return commitId;
    });
  if (secrets.length > 0 && (await isProtected(ctx, project.id, at))) {
    // The subfolders are tried first and rolled back, so a change request is opened only when they apply.
    if (countOf(folders) > 0)
      await inRolledBackTransaction(ctx.deps.db, (trx) => writeSubfolders(ctx, trx, at.folderId, folders));
    const approval = await ctx.deps.secretWriteGate.propose(ctx, target, secrets);
    if (approval) {
      if (countOf(folders) > 0) await write(folders, [], approval.id);
      return { message: "success" as const, approval };
    }
  }
  const commitId = await write(folders, secrets);
  return { message: "success" as const, ...(commitId ? { commitId } : {}) };
};
