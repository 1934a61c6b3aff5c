import { inTransaction } from "../../db/transaction";
import { SECRET_VALUE_HIDDEN_MASK, SecretNameSchema, type ChangeRequest, type SecretRaw } from "@keyward/contract";
import { noteAudit, type RequestContext } from "../../context";
import { BadRequestError, NotFoundError } from "../../errors";
import { requireFolderAt } from "../folders/folder.service";
import { ensureProjectKey } from "../project-keys/project-key.service";
import { rewriteDependents } from "./references/rewrite";
import { referenceTargets } from "./references/targets";
import { validateReferences } from "./references/validate";
import {
  assertMayActIn,
  assertMayStore,
  assertSecretAction,
  canReadValue,
  refusePersonal,
  getProjectPermissionByRef,
  secretObject,
  type ProjectRef,
} from "./secret-access";
import { openSecretRow, type MetadataEntry } from "./secret-crypto";
import { toSecretRaw } from "./secret.dto";
import {
  asKeyConflict,
  insertNewSecrets,
  newSecretState,
  plainOf,
  recordDeletions,
  stateOf,
  writeSecretUpdate,
} from "./secret-persist";
import { deleteSecretRows, findSecretByKey } from "./secret.repository";
import { resolveTagIds } from "./tags/tag.service";
import { canonicalIds, updatedState } from "./secret-apply";
import { createPersonalSecret, deletePersonalSecret, updatePersonalSecret } from "./secret-personal.service";

type Scope = ProjectRef & { environment: string; secretPath: string };

export type CreateBody = Scope & {
  secretValue: string;
  secretComment: string;
  secretMetadata?: MetadataEntry[];
  tagIds?: string[];
  skipMultilineEncoding?: boolean | null;
  type: "shared" | "personal";
  secretReminderRepeatDays?: number | null;
  secretReminderNote?: string | null;
};

export type UpdateBody = Scope & {
  secretValue?: string;
  secretComment?: string;
  secretMetadata?: MetadataEntry[];
  tagIds?: string[];
  skipMultilineEncoding?: boolean | null;
  type: "shared" | "personal";
  newSecretName?: string;
  secretReminderRepeatDays?: number | null;
  secretReminderNote?: string | null;
};

export { canonicalIds };

const tagSlugs = (state: { tags: { slug: string }[] }) => state.tags.map((t) => t.slug);

/** A single write's fields as one change of a change request. */
const proposedItem = (name: string, body: Omit<UpdateBody, "type" | keyof Scope>) => ({
  secretKey: name,
  secretValue: body.secretValue,
  secretComment: body.secretComment,
  skipMultilineEncoding: body.skipMultilineEncoding,
  secretMetadata: body.secretMetadata,
  tagIds: body.tagIds,
});

/** The project, the caller's ability and the folder a write names (404 on a missing folder). */
export const writeScope = async (ctx: RequestContext, body: Scope) => {
  const { project, ability } = await getProjectPermissionByRef(ctx, body);
  const { folder } = await requireFolderAt(ctx, project.id, body.environment, body.secretPath);
  return { project, ability, folderId: folder.id };
};

/** POST …/raw/:name and /api/v4/secrets/:name. */
export const createSecret = async (
  ctx: RequestContext,
  name: string,
  body: CreateBody,
): Promise<{ secret: SecretRaw } | { approval: ChangeRequest }> => {
  const { project, ability, folderId } = await writeScope(ctx, body);
  refusePersonal(ctx.actor, body.type, "create");
  const place = { projectId: project.id, environment: body.environment, secretPath: body.secretPath };
  if (body.type === "personal") return createPersonalSecret(ctx, name, body, { project, ability, folderId, place });
  const approval = await ctx.deps.secretWriteGate.propose(ctx, { ...place, ability, folderId }, [
    {
      op: "create",
      item: { ...proposedItem(name, body), secretValue: body.secretValue, secretComment: body.secretComment },
    },
  ]);
  if (approval) return { approval };
  const [created] = await inTransaction(ctx, async (trx) => {
    const tags = await resolveTagIds(trx, project.id, canonicalIds(body.tagIds ?? []));
    const state = newSecretState(
      body,
      folderId,
      name,
      tags.map((t) => ({ id: t.id, slug: t.slug, color: t.color })),
    );
    // The right first: whether a name is taken is not told to someone who may not create it there.
    assertMayStore(ability, "create", place, state);
    if (await findSecretByKey(trx, folderId, name)) throw new BadRequestError("Secret already exist");
    await validateReferences([body.secretValue], place, ability, referenceTargets(trx, project.id));
    const key = await ensureProjectKey(ctx.deps, trx, project.id);
    const rows = await insertNewSecrets(ctx, trx, key, [state]);
    noteAudit(ctx, { metadata: { secretId: rows[0]?.id, secretVersion: rows[0]?.version } });
    return rows;
  }).catch(asKeyConflict("Secret already exist"));
  return { secret: toSecretRaw(created!, place, body.secretValue) };
};

/** PATCH …/raw/:name and /api/v4/secrets/:name: only the fields given change. */
export const updateSecret = async (ctx: RequestContext, name: string, body: UpdateBody) => {
  if (body.newSecretName === "") throw new BadRequestError("New secret name cannot be empty");
  const { project, ability, folderId } = await writeScope(ctx, body);
  refusePersonal(ctx.actor, body.type, "create");
  const place = { projectId: project.id, environment: body.environment, secretPath: body.secretPath };
  if (body.type === "personal") return updatePersonalSecret(ctx, name, body, { project, ability, folderId, place });
  const newName = body.newSecretName !== undefined && body.newSecretName !== name ? body.newSecretName : undefined;
  if (newName !== undefined) SecretNameSchema.parse(newName);
  const approval = await ctx.deps.secretWriteGate.propose(ctx, { ...place, ability, folderId }, [
    {
      op: "update",
      item: {
        ...proposedItem(name, body),
        newSecretName: newName,
        secretReminderNote: body.secretReminderNote,
        secretReminderRepeatDays: body.secretReminderRepeatDays,
      },
    },
  ]);
  if (approval) return { approval };
  assertMayActIn(ability, "edit", { ...place, secretName: name });
  const updated = await inTransaction(ctx, async (trx) => {
    const row = await findSecretByKey(trx, folderId, name, true);
    if (!row) throw new NotFoundError(`Secret with name ${name} not found`);
    const key = await ensureProjectKey(ctx.deps, trx, project.id);
    const before = stateOf(openSecretRow(key, row));
    assertMayStore(ability, "edit", place, before);
    let tags = before.tags;
    if (body.tagIds !== undefined) {
      tags = (await resolveTagIds(trx, project.id, canonicalIds(body.tagIds))).map((t) => ({
        id: t.id,
        slug: t.slug,
        color: t.color,
      }));
      assertMayStore(ability, "edit", place, { key: before.key, tags });
    }
    if (newName !== undefined && (await findSecretByKey(trx, folderId, newName)))
      throw new BadRequestError("Secret with the new name already exist");
    const after = updatedState(before, newName ?? name, tags, body);
    assertMayStore(ability, "edit", place, after);
    if (body.secretValue !== undefined)
      await validateReferences([body.secretValue], place, ability, referenceTargets(trx, project.id));
    const written = await writeSecretUpdate(ctx, trx, key, before, after);
    if (newName !== undefined) {
      const at = { environment: body.environment, secretPath: body.secretPath };
      const moved = { from: { ...at, key: name }, to: { ...at, key: newName } };
      await rewriteDependents(ctx, trx, key, ability, project.id, [moved], new Set([row.id]));
    }
    const plain = plainOf(after, { ...written, created_at: row.created_at }, ctx);
    noteAudit(ctx, { metadata: { secretId: plain.id, secretVersion: plain.version } });
    return plain;
  }).catch(asKeyConflict("Secret with the new name already exist"));
  return { secret: { ...toSecretRaw(updated, place, body.secretValue ?? ""), secretValueHidden: false } };
};

/**
 * DELETE …/raw/:name and /api/v4/secrets/:name; the value shows only to a reader. Deleting a shared
 * secret deletes the personal secrets of its key with it (they override nothing any more).
 */
export const deleteSecret = async (
  ctx: RequestContext,
  name: string,
  body: Scope & { type: "shared" | "personal" },
) => {
  const { project, ability, folderId } = await writeScope(ctx, body);
  refusePersonal(ctx.actor, body.type, "delete");
  const place = { projectId: project.id, environment: body.environment, secretPath: body.secretPath };
  if (body.type === "personal") return deletePersonalSecret(ctx, name, { project, ability, folderId, place });
  const approval = await ctx.deps.secretWriteGate.propose(ctx, { ...place, ability, folderId }, [
    { op: "delete", secretKey: name },
  ]);
  if (approval) return { approval };
  assertMayActIn(ability, "delete", { ...place, secretName: name });
  const deleted = await inTransaction(ctx, async (trx) => {
    const row = await findSecretByKey(trx, folderId, name, true);
    if (!row) throw new NotFoundError("Secret not found");
    const key = await ensureProjectKey(ctx.deps, trx, project.id);
    const secret = openSecretRow(key, row);
    assertSecretAction(ability, "delete", secretObject(body.environment, body.secretPath, name, tagSlugs(secret)));
    await deleteSecretRows(trx, folderId, [name]);
    await recordDeletions(ctx, trx, key, [{ state: stateOf(secret), version: row.version }]);
    noteAudit(ctx, { metadata: { secretId: secret.id, secretVersion: row.version } });
    return secret;
  });
  const readable = canReadValue(ability, secretObject(body.environment, body.secretPath, name, tagSlugs(deleted)));
  return {
    secret: {
      ...toSecretRaw(deleted, place, readable ? deleted.value() : SECRET_VALUE_HIDDEN_MASK),
      secretValueHidden: !readable,
    },
  };
};
