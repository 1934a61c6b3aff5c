import { inTransaction } from "../../db/transaction";
import type { SecretRaw } from "@keyward/contract";
import { noteAudit, type RequestContext } from "../../context";
import { BadRequestError, NotFoundError } from "../../errors";
import type { Ability } from "../../permissions";
import { ensureProjectKey } from "../project-keys/project-key.service";
import { referenceTargets } from "./references/targets";
import { validateReferences } from "./references/validate";
import { assertMayStore, assertSecretAction, secretObject } from "./secret-access";
import { canonicalIds, updatedState } from "./secret-apply";
import { openSecretRow } from "./secret-crypto";
import { toSecretRaw, type Place } from "./secret.dto";
import {
  asKeyConflict,
  insertNewSecrets,
  newSecretState,
  plainOf,
  recordDeletions,
  stateOf,
  writeSecretUpdate,
  type SecretState,
} from "./secret-persist";
import { deleteSecretRowById, findPersonalSecret, findSecretByKey } from "./secret.repository";
import { resolveTagIds } from "./tags/tag.service";
import type { CreateBody, UpdateBody } from "./secret-write.service";

/**
 * A person's personal secrets: their own value of a shared secret's key in the same folder, which
 * their reads show in place of the shared one. Only the owner ever reads or writes one; machine
 * identities own none (refused before this module is reached). Change policies do not apply: a
 * personal value changes nothing anyone else reads. The rights are those of the same write on the
 * shared secret (create, edit, delete on the folder, key and the personal secret's tags).
 */
export type PersonalScope = { project: { id: string }; ability: Ability; folderId: string; place: Place };

const tagRefs = (rows: readonly { id: string; slug: string; color: string | null }[]) =>
  rows.map((t) => ({ id: t.id, slug: t.slug, color: t.color }));

const auditOf = (secret: { id: string; version: number }) => ({
  metadata: { secretId: secret.id, secretVersion: secret.version, secretType: "personal" },
});

/** POST …/raw/:name with `type: "personal"`: needs the shared secret of that key in the folder. */
export const createPersonalSecret = async (
  ctx: RequestContext,
  name: string,
  body: CreateBody,
  { project, ability, folderId, place }: PersonalScope,
): Promise<{ secret: SecretRaw }> => {
  const [created] = await inTransaction(ctx, async (trx) => {
    const tags = tagRefs(await resolveTagIds(trx, project.id, canonicalIds(body.tagIds ?? [])));
    const state = newSecretState(body, folderId, name, tags, ctx.actor.id);
    // The right to write comes first: no one learns which shared keys exist without it.
    assertMayStore(ability, "create", place, state);
    if (!(await findSecretByKey(trx, folderId, name)))
      throw new BadRequestError("Failed to create personal secret override for no corresponding shared secret");
    if (await findPersonalSecret(trx, folderId, name, ctx.actor.id)) throw new BadRequestError("Secret already exist");
    await validateReferences([body.secretValue], place, ability, referenceTargets(trx, project.id));
    const key = await ensureProjectKey(ctx.deps, trx, project.id);
    const rows = await insertNewSecrets(ctx, trx, key, [state]);
    noteAudit(ctx, auditOf(rows[0]!));
    return rows;
  }).catch(asKeyConflict("Secret already exist"));
  return { secret: toSecretRaw(created!, place, body.secretValue) };
};

/** PATCH …/raw/:name with `type: "personal"`: the caller's own personal secret of that key; never renamed. */
export const updatePersonalSecret = async (
  ctx: RequestContext,
  name: string,
  body: UpdateBody,
  { project, ability, folderId, place }: PersonalScope,
) => {
  if (body.newSecretName !== undefined && body.newSecretName !== name)
    throw new BadRequestError("Personal secret cannot change the key name");
  const updated = await inTransaction(ctx, async (trx) => {
    const row = await findPersonalSecret(trx, folderId, name, ctx.actor.id, true);
    if (!row) throw new NotFoundError(`Personal secret with name ${name} not found`);
    const key = await ensureProjectKey(ctx.deps, trx, project.id);
    const before: SecretState = { ...stateOf(openSecretRow(key, row)), userId: ctx.actor.id };
    assertMayStore(ability, "edit", place, before);
    const tags =
      body.tagIds === undefined
        ? before.tags
        : tagRefs(await resolveTagIds(trx, project.id, canonicalIds(body.tagIds)));
    const after = updatedState(before, name, tags, body);
    assertMayStore(ability, "edit", place, after);
    if (body.secretValue !== undefined)
      await validateReferences([body.secretValue], place, ability, referenceTargets(trx, project.id));
    const written = await writeSecretUpdate(ctx, trx, key, before, after);
    const plain = plainOf(after, { ...written, created_at: row.created_at }, ctx);
    noteAudit(ctx, auditOf(plain));
    return plain;
  });
  return { secret: { ...toSecretRaw(updated, place, body.secretValue ?? ""), secretValueHidden: false } };
};

/** DELETE …/raw/:name with `type: "personal"`: the caller's own only; the shared secret stays. */
export const deletePersonalSecret = async (
  ctx: RequestContext,
  name: string,
  { project, ability, folderId, place }: PersonalScope,
) => {
  const deleted = await inTransaction(ctx, async (trx) => {
    const row = await findPersonalSecret(trx, folderId, name, ctx.actor.id, true);
    if (!row) throw new NotFoundError("Secret not found");
    const key = await ensureProjectKey(ctx.deps, trx, project.id);
    const secret = openSecretRow(key, row);
    const slugs = secret.tags.map((t) => t.slug);
    assertSecretAction(ability, "delete", secretObject(place.environment, place.secretPath, name, slugs));
    await deleteSecretRowById(trx, row.id);
    await recordDeletions(ctx, trx, key, [
      { state: { ...stateOf(secret), userId: ctx.actor.id }, version: row.version },
    ]);
    noteAudit(ctx, auditOf({ id: secret.id, version: row.version }));
    return secret;
  });
  // Its owner always sees their own value.
  return { secret: { ...toSecretRaw(deleted, place, deleted.value()), secretValueHidden: false } };
};
