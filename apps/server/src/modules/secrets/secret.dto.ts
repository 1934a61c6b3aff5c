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

/** An ISO timestamp as the database sent it (see secret.repository.ts), else formatted here. */
const ISO_UTC = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const isoOf = (value: Date | string) => (typeof value === "string" && ISO_UTC.test(value) ? value : toIso(value));

const actorOf = (secret: PlainSecret) =>
  secret.actorId ? { actorId: secret.actorId, actorType: secret.actorType ?? "identity" } : null;

const tagsDto = (secret: PlainSecret) =>
  secret.tags.map((t) => ({ id: t.id, slug: t.slug, color: t.color, name: t.slug }));

/** The raw secret with `value` as given (already masked or expanded by the caller). */
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
  createdAt: isoOf(secret.createdAt),
  updatedAt: isoOf(secret.updatedAt),
  actor: actorOf(secret),
  isRotatedSecret: false,
  rotationId: null,
});

/**
 * What list and get-by-name return: hidden values read as the mask. Built as one literal in the
 * key order of toSecretRaw (lists build hundreds of these per request).
 */
export const toSecretRead = (
  secret: PlainSecret,
  place: Place,
  view: { hidden: boolean; value?: string },
): SecretRead => ({
  id: secret.id,
  _id: secret.id,
  workspace: place.projectId,
  environment: place.environment,
  version: secret.version,
  type: secret.type,
  secretKey: secret.key,
  secretValue: view.hidden ? SECRET_VALUE_HIDDEN_MASK : (view.value ?? secret.value()),
  secretComment: secret.comment,
  secretReminderNote: secret.reminderNote,
  secretReminderRepeatDays: secret.reminderRepeatDays,
  skipMultilineEncoding: secret.skipMultilineEncoding,
  createdAt: isoOf(secret.createdAt),
  updatedAt: isoOf(secret.updatedAt),
  actor: actorOf(secret),
  isRotatedSecret: false,
  rotationId: null,
  secretValueHidden: view.hidden,
  secretPath: place.secretPath,
  tags: tagsDto(secret),
  secretMetadata: metadataDto(secret.metadata, view.hidden),
});

/** A secret inside `imports[].secrets[]`: no timestamps, `workspace` empty. */
export const toImportedSecret = (
  secret: PlainSecret,
  environment: string,
  view: { hidden: boolean; value?: string },
) => ({
  id: secret.id,
  _id: secret.id,
  workspace: "",
  environment,
  version: secret.version,
  type: secret.type,
  secretKey: secret.key,
  secretValue: view.hidden ? SECRET_VALUE_HIDDEN_MASK : (view.value ?? secret.value()),
  secretComment: secret.comment,
  secretReminderNote: secret.reminderNote,
  secretReminderRepeatDays: secret.reminderRepeatDays,
  skipMultilineEncoding: secret.skipMultilineEncoding,
  actor: actorOf(secret),
  isRotatedSecret: false,
  rotationId: null,
  secretValueHidden: view.hidden,
  secretMetadata: metadataDto(secret.metadata, view.hidden),
});
