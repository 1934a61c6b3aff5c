import type { ResourceChange } from "@keyward/contract";
import { SECRET_VALUE_HIDDEN_MASK } from "@keyward/contract";
import type { DataKey } from "../../../crypto/data-keys";
import type { Ability } from "../../../permissions";
import { canReadValue, secretObject } from "../secret-access";
import { openVersionRow, type PlainSecret } from "../secret-crypto";
import type { VersionRow } from "../versions/version.repository";

/** What putting a folder back does to one secret: each side is a recorded version. */
export type PlanItem =
  | { kind: "delete"; secretId: string; current: VersionRow }
  | { kind: "update"; secretId: string; current: VersionRow; target: VersionRow }
  | { kind: "create"; secretId: string; target: VersionRow };

/** Where a folder is, as permissions see it. */
export type FolderAt = { folderId: string; environment: string; secretPath: string };

const sortedIds = (row: VersionRow) => [...row.tag_ids].sort().join();

/** Two versions hold the same secret: name, value, comment, settings, tags and metadata. */
export const sameContent = (key: DataKey, a: VersionRow, b: VersionRow) => {
  if (a.id === b.id) return true;
  if (
    a.key !== b.key ||
    a.skip_multiline_encoding !== b.skip_multiline_encoding ||
    a.reminder_note !== b.reminder_note ||
    a.reminder_repeat_days !== b.reminder_repeat_days ||
    sortedIds(a) !== sortedIds(b)
  )
    return false;
  const [x, y] = [openVersionRow(key, a, a.id), openVersionRow(key, b, b.id)];
  return (
    x.value() === y.value() && x.comment === y.comment && JSON.stringify(x.metadata) === JSON.stringify(y.metadata)
  );
};

/**
 * The steps from the folder as it is (`current`) to a recorded state (`target`), keyed by secret:
 * deletions first, then updates, then re-creations, each in name order. Updates whose two versions
 * hold the same content are no difference.
 */
export const planBetween = (key: DataKey, current: readonly VersionRow[], target: readonly VersionRow[]) => {
  const now = new Map(current.map((r) => [r.secret_id, r]));
  const then = new Map(target.map((r) => [r.secret_id, r]));
  const deletes: PlanItem[] = current
    .filter((r) => !then.has(r.secret_id))
    .map((r) => ({ kind: "delete", secretId: r.secret_id, current: r }));
  const updates: PlanItem[] = [];
  const creates: PlanItem[] = [];
  for (const t of target) {
    const c = now.get(t.secret_id);
    if (!c) creates.push({ kind: "create", secretId: t.secret_id, target: t });
    else if (!sameContent(key, c, t)) updates.push({ kind: "update", secretId: t.secret_id, current: c, target: t });
  }
  return [...deletes, ...updates, ...creates];
};

/** A version's content as answers show it: the value masked unless the caller may read it. */
export const contentOf = (secret: PlainSecret, ability: Ability, at: FolderAt) => {
  const readable = canReadValue(
    ability,
    secretObject(
      at.environment,
      at.secretPath,
      secret.key,
      secret.tags.map((t) => t.slug),
    ),
  );
  return {
    secretKey: secret.key,
    secretValue: readable ? secret.value() : SECRET_VALUE_HIDDEN_MASK,
    secretValueHidden: !readable,
    secretComment: secret.comment,
    skipMultilineEncoding: secret.skipMultilineEncoding,
    secretReminderNote: secret.reminderNote,
    secretReminderRepeatDays: secret.reminderRepeatDays,
    tags: secret.tags.map((t) => t.slug),
    metadata: secret.metadata.map((m) => ({ key: m.key, value: m.value })),
  };
};

/** A plan step as the compare route answers it. */
export const resourceChangeOf = (
  key: DataKey,
  item: PlanItem,
  ability: Ability,
  at: FolderAt,
  commitId: string,
): ResourceChange => {
  const shown = item.kind === "delete" ? item.current : item.target;
  const versions = [contentOf(openVersionRow(key, shown, shown.id), ability, at)];
  if (item.kind === "update") versions.push(contentOf(openVersionRow(key, item.current, item.current.id), ability, at));
  return {
    type: "secret",
    id: item.secretId,
    secretId: item.secretId,
    versionId: shown.id,
    ...(item.kind === "update" ? { oldVersionId: item.current.id, fromVersion: String(item.current.version) } : {}),
    changeType: item.kind,
    commitId,
    secretKey: shown.key,
    secretVersion: String(shown.version),
    versions,
  };
};
