import type { Tx } from "../../../db/transaction";
import type { RequestContext } from "../../../context";
import type { DataKey } from "../../../crypto/data-keys";
import { BadRequestError } from "../../../errors";
import type { Ability } from "../../../permissions";
import type { ProposedChange } from "../write-gate";
import { assertMayStore, assertSecretAction, secretObject } from "../secret-access";
import { openSecretRow, openVersionRow } from "../secret-crypto";
import {
  insertNewSecrets,
  newSecretId,
  recordDeletions,
  stateOf,
  stateWithContentOf,
  writeSecretUpdate,
  type SecretState,
} from "../secret-persist";
import { deleteSecretRows, lockSecretsByIds } from "../secret.repository";
import { lastVersionNumbers } from "./commit.repository";
import type { FolderAt, PlanItem } from "./commit-plan";
import type { VersionRow } from "../versions/version.repository";

export const STALE = "The folder changed since the preview: compare again before rolling back";

/** A recorded version as the state a secret of `folderId` takes again (its tags that still exist). */
export const stateFromVersion = (key: DataKey, target: VersionRow, id: string, folderId: string): SecretState =>
  stateWithContentOf({ id, folderId }, openVersionRow(key, target, target.id));

/**
 * The caller must be able to do each step itself: delete what goes, edit what changes (as it is and as
 * it will be), create what returns. A rollback is never a way around the rights on secrets.
 */
export const assertMayApply = (key: DataKey, ability: Ability, at: FolderAt, plan: readonly PlanItem[]) => {
  for (const item of plan) {
    if (item.kind === "delete") {
      const tags = item.current.tags.map((t) => t.slug);
      assertSecretAction(ability, "delete", secretObject(at.environment, at.secretPath, item.current.key, tags));
      continue;
    }
    const after = openVersionRow(key, item.target, item.target.id);
    if (item.kind === "update") assertMayStore(ability, "edit", at, { key: item.current.key, tags: item.current.tags });
    assertMayStore(ability, item.kind === "update" ? "edit" : "create", at, after);
  }
};

/** A plan as the items of a change request, for a folder a change policy protects. */
export const proposedChangesOf = (key: DataKey, plan: readonly PlanItem[]): ProposedChange[] =>
  plan.map((item): ProposedChange => {
    if (item.kind === "delete") return { op: "delete", secretKey: item.current.key };
    const old = openVersionRow(key, item.target, item.target.id);
    const fields = {
      secretValue: old.value(),
      secretComment: old.comment,
      skipMultilineEncoding: old.skipMultilineEncoding,
      secretMetadata: old.metadata,
      tagIds: old.tags.map((t) => t.id),
    };
    if (item.kind === "create") return { op: "create", item: { secretKey: old.key, ...fields } };
    return {
      op: "update",
      item: {
        secretKey: item.current.key,
        ...(old.key !== item.current.key ? { newSecretName: old.key } : {}),
        ...fields,
        secretReminderNote: old.reminderNote,
        secretReminderRepeatDays: old.reminderRepeatDays,
      },
    };
  });

/**
 * Applies a plan inside the caller's transaction, as new versions: every secret must still be at the
 * version the plan was made from (else 400, nothing written). Deletions first, then updates, then
 * re-creations under their old id (a new one if that id now lives in another folder).
 */
export const applyPlan = async (
  ctx: RequestContext,
  trx: Tx,
  key: DataKey,
  at: FolderAt,
  plan: readonly PlanItem[],
) => {
  const live = new Map(
    (
      await lockSecretsByIds(
        trx,
        plan.map((p) => p.secretId),
      )
    ).map((row) => [row.id, row]),
  );
  for (const item of plan) {
    const row = live.get(item.secretId);
    const stale =
      item.kind === "create"
        ? row !== undefined && row.folder_id === at.folderId
        : !row || row.folder_id !== at.folderId || row.version !== item.current.version;
    if (stale) throw new BadRequestError(STALE);
  }
  const deleted = plan.flatMap((p) => (p.kind === "delete" ? [live.get(p.secretId)!] : []));
  if (deleted.length > 0) {
    await deleteSecretRows(
      trx,
      at.folderId,
      deleted.map((row) => row.key),
    );
    await recordDeletions(
      ctx,
      trx,
      key,
      deleted.map((row) => ({ state: stateOf(openSecretRow(key, row)), version: row.version })),
    );
  }
  for (const item of plan) {
    if (item.kind !== "update") continue;
    const before = stateOf(openSecretRow(key, live.get(item.secretId)!));
    await writeSecretUpdate(ctx, trx, key, before, stateFromVersion(key, item.target, item.secretId, at.folderId));
  }
  const creates = plan.flatMap((p) => (p.kind === "create" ? [p] : []));
  const last = await lastVersionNumbers(
    trx,
    creates.map((c) => c.secretId),
  );
  const states = creates.map((item) =>
    stateFromVersion(key, item.target, live.has(item.secretId) ? newSecretId() : item.secretId, at.folderId),
  );
  const versions = new Map(states.flatMap((s) => (last.has(s.id) ? [[s.id, last.get(s.id)! + 1] as const] : [])));
  await insertNewSecrets(ctx, trx, key, states, versions);
  return plan.length;
};
