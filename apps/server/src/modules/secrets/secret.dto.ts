import { SECRET_VALUE_HIDDEN_MASK, type SecretRaw, type SecretRead } from "@keyward/contract";
import { toIso } from "../../lib/dates";
import type { MetadataEntry, PlainSecret } from "./secret-crypto";

export type Place = { projectId: string; environment: string; secretPath: string };

const metadataDto = (entries: readonly MetadataEntry[], hidden: boolean) =>
  entries.map((m) => ({
    key: m.key,
    value: hidden && m.isEncrypted ? SECRET_VALUE_HIDDEN_MASK : m.value,
    isEncrypted: m.isEncrypted,
  }));

/** The raw secret (reference §1.9) with `value` as given (already masked or expanded by the caller). */
export const toSecretRaw = (secret: PlainSecret, place: Place, value: string): SecretRaw => ({
  id: secret.id,
  _id: secret.id,
  workspace: place.projectId,
  environment: place.environment,
  version: secret.version,
  type: secret.type,
  secretKey: secret.key,
  secretValue: value,
  secretComment: secret.comment,
  secretReminderNote: secret.reminderNote,
  secretReminderRepeatDays: secret.reminderRepeatDays,
  skipMultilineEncoding: secret.skipMultilineEncoding,
  createdAt: toIso(secret.createdAt),
  updatedAt: toIso(secret.updatedAt),
  actor: secret.actorId ? { actorId: secret.actorId, actorType: secret.actorType ?? "identity" } : null,
  isRotatedSecret: false,
  rotationId: null,
});

/** What list and get-by-name return: hidden values read as the mask. */
export const toSecretRead = (
  secret: PlainSecret,
  place: Place,
  view: { hidden: boolean; value?: string },
): SecretRead => ({
  ...toSecretRaw(secret, place, view.hidden ? SECRET_VALUE_HIDDEN_MASK : (view.value ?? secret.value())),
  secretValueHidden: view.hidden,
  secretPath: place.secretPath,
  tags: secret.tags.map((t) => ({ id: t.id, slug: t.slug, color: t.color, name: t.slug })),
  secretMetadata: metadataDto(secret.metadata, view.hidden),
});

/** A secret inside `imports[].secrets[]`: no timestamps, `workspace` empty (reference §2.7). */
export const toImportedSecret = (
  secret: PlainSecret,
  environment: string,
  view: { hidden: boolean; value?: string },
) => {
  const {
    createdAt: _c,
    updatedAt: _u,
    ...raw
  } = toSecretRaw(
    secret,
    { projectId: "", environment, secretPath: "" },
    view.hidden ? SECRET_VALUE_HIDDEN_MASK : (view.value ?? secret.value()),
  );
  return { ...raw, secretValueHidden: view.hidden, secretMetadata: metadataDto(secret.metadata, view.hidden) };
};
