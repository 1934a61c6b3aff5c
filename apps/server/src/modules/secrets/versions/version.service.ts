import { inTransaction } from "../../../db/transaction";
import { SECRET_VALUE_HIDDEN_MASK, type SecretVersion } from "@keyward/contract";
import { noteAudit, type RequestContext } from "../../../context";
import { isUuid } from "../../../db/errors";
import { BadRequestError, ForbiddenError, NotFoundError } from "../../../errors";
import { findProjectRow, getProjectPermissionForRow } from "../../authz/project-access";
import { SECRET_MANAGER } from "../../folders/folder.service";
import { ensureProjectKey, findProjectKey } from "../../project-keys/project-key.service";
import { assertSecretAction, canReadValue, secretObject } from "../secret-access";
import { openSecretRow, openVersionRow } from "../secret-crypto";
import { toSecretRaw } from "../secret.dto";
import { plainOf, stateOf, stateWithContentOf, writeSecretUpdate, asKeyConflict } from "../secret-persist";
import { findFolderPlace, findSecretByKey, lockSecretById } from "../secret.repository";
import { findLatestVersion, findVersion, listVersions, type VersionRow } from "./version.repository";
import type { Ability } from "../../../permissions";

const secretNotFound = (id: string) => new NotFoundError(`Secret with ID '${id}' not found`);

/** The secret's folder, project and the caller's ability, found through its versions (so also after a deletion). */
const versionScope = async (ctx: RequestContext, secretId: string) => {
  const latest = isUuid(secretId) ? await findLatestVersion(ctx.deps.db, secretId) : undefined;
  // A personal secret's history is its owner's alone: to anyone else it does not exist.
  if (!latest || (latest.user_id !== null && latest.user_id !== ctx.actor.id)) throw secretNotFound(secretId);
  // A secret whose folder was deleted keeps its history for a rollback of the folder, not for reads.
  const place = await findFolderPlace(ctx.deps.db, latest.folder_id);
  if (!place) throw secretNotFound(secretId);
  const project = await findProjectRow(ctx.deps.db, place.project_id);
  if (!project || project.org_id !== ctx.actor.orgId) throw secretNotFound(secretId);
  const { ability } = await getProjectPermissionForRow(ctx, project, SECRET_MANAGER);
  const current = secretObject(
    place.env_slug,
    place.path,
    latest.key,
    latest.tags.map((t) => t.slug),
  );
  return { place, project, ability, current };
};

/** GET /api/v1/secret/:id/secret-versions: newest first, values masked without read-value. */
export const listSecretVersions = async (
  ctx: RequestContext,
  secretId: string,
  page: { offset: number; limit: number },
): Promise<SecretVersion[]> => {
  const { place, project, ability, current } = await versionScope(ctx, secretId);
  if (!ability.can("read", "secret-rollback") && !ability.can("read", "commits"))
    throw new ForbiddenError("You do not have permission to read secret versions");
  const rows = await listVersions(ctx.deps.db, secretId, page.offset, page.limit);
  const key = await findProjectKey(ctx.deps, project.id);
  if (!key) return [];
  const dtoPlace = { projectId: project.id, environment: place.env_slug, secretPath: place.path };
  return rows.map((row) => {
    const version = openVersionRow(key, row, row.id);
    // A value is shown only to who may read it under the secret's classification then and now.
    const readable =
      canReadValue(ability, current) &&
      canReadValue(
        ability,
        secretObject(
          place.env_slug,
          place.path,
          row.key,
          row.tags.map((t) => t.slug),
        ),
      );
    return {
      ...toSecretRaw(version, dtoPlace, readable ? version.value() : SECRET_VALUE_HIDDEN_MASK),
      secretId: row.secret_id,
      secretValueHidden: !readable,
      isDeleted: row.is_deleted,
    };
  });
};

/**
 * Keyward's rollback: the secret takes a recorded version's name, value, comment, tags (those
 * still existing) and metadata again, as one more version. Needs rollback rights and `edit` on the
 * secret as it is and as it will be.
 */
export const rollbackSecret = async (ctx: RequestContext, secretId: string, versionNumber: number) => {
  const { place, project, ability } = await versionScope(ctx, secretId);
  if (!ability.can("create", "secret-rollback") && !ability.can("perform-rollback", "commits"))
    throw new ForbiddenError("You do not have permission to roll back secrets", "PermissionDenied");
  const target = await findVersion(ctx.deps.db, secretId, versionNumber);
  if (!target || target.is_deleted)
    throw new NotFoundError(`Secret version ${versionNumber} of secret with ID '${secretId}' not found`);
  const approval = await proposeRollback(ctx, { ...place, projectId: project.id, ability }, target);
  if (approval) return { approval };
  const objectOf = (key: string, tags: { slug: string }[]) =>
    secretObject(
      place.env_slug,
      place.path,
      key,
      tags.map((t) => t.slug),
    );
  const restored = await inTransaction(ctx, async (trx) => {
    const row = await lockSecretById(trx, secretId);
    if (!row) throw secretNotFound(secretId);
    const key = await ensureProjectKey(ctx.deps, trx, project.id);
    const before = stateOf(openSecretRow(key, row));
    const old = openVersionRow(key, target);
    assertSecretAction(ability, "edit", objectOf(before.key, before.tags));
    assertSecretAction(ability, "edit", objectOf(old.key, old.tags));
    if (old.key !== before.key && (await findSecretByKey(trx, row.folder_id, old.key)))
      throw new BadRequestError("Secret with the new name already exist");
    const after = stateWithContentOf(before, old);
    const written = await writeSecretUpdate(ctx, trx, key, before, after);
    const plain = plainOf(after, { ...written, created_at: row.created_at }, ctx);
    noteAudit(ctx, {
      metadata: {
        secretKey: plain.key,
        environment: place.env_slug,
        secretPath: place.path,
        secretVersion: plain.version,
      },
    });
    return plain;
  }).catch(asKeyConflict("Secret with the new name already exist"));
  const readable = canReadValue(ability, objectOf(restored.key, restored.tags));
  return {
    secret: {
      ...toSecretRaw(
        restored,
        { projectId: project.id, environment: place.env_slug, secretPath: place.path },
        readable ? restored.value() : SECRET_VALUE_HIDDEN_MASK,
      ),
      secretValueHidden: !readable,
    },
  };
};

/**
 * In a folder a change policy protects, a rollback is proposed as a change request (the secret's update
 * to the version's content) instead of written; undefined when the write may go ahead.
 */
const proposeRollback = async (
  ctx: RequestContext,
  at: { projectId: string; ability: Ability; env_slug: string; path: string },
  target: VersionRow,
) => {
  const [latest, key] = await Promise.all([
    findLatestVersion(ctx.deps.db, target.secret_id),
    findProjectKey(ctx.deps, at.projectId),
  ]);
  if (!latest || latest.is_deleted || !key) return undefined;
  const old = openVersionRow(key, target);
  return ctx.deps.secretWriteGate.propose(
    ctx,
    {
      projectId: at.projectId,
      ability: at.ability,
      folderId: latest.folder_id,
      environment: at.env_slug,
      secretPath: at.path,
    },
    [
      {
        op: "update",
        item: {
          secretKey: latest.key,
          ...(old.key !== latest.key ? { newSecretName: old.key } : {}),
          secretValue: old.value(),
          secretComment: old.comment,
          skipMultilineEncoding: old.skipMultilineEncoding,
          secretReminderNote: old.reminderNote,
          secretReminderRepeatDays: old.reminderRepeatDays,
          secretMetadata: old.metadata,
          tagIds: old.tags.map((t) => t.id),
        },
      },
    ],
  );
};
