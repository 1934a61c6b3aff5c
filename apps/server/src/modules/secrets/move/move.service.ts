import { noteAudit, type RequestContext } from "../../../context";
import type { MoveSecretsBody } from "@keyward/contract";
import { isUuid } from "../../../db/errors";
import { inTransaction } from "../../../db/transaction";
import { BadRequestError, NotFoundError } from "../../../errors";
import type { Ability } from "../../../permissions";
import { ensureProjectKey } from "../../project-keys/project-key.service";
import { rewriteDependents } from "../references/rewrite";
import {
  assertCanDescribe,
  assertCanReadValue,
  assertMayActIn,
  assertMayStore,
  assertSecretAction,
  canReadValue,
  getProjectPermissionByRef,
  secretObject,
} from "../secret-access";
import { openSecretRow, type PlainSecret } from "../secret-crypto";
import {
  asKeyConflict,
  insertNewSecrets,
  newSecretId,
  recordDeletions,
  stateOf,
  writeSecretUpdate,
  type SecretState,
} from "../secret-persist";
import { lockSecretsByKeys, resolveFolder } from "../secret.repository";
import { deleteFolderSecretsByIds, lockFolderSecretsByIds } from "./move.repository";

const existsMessage = "Failed to move secrets. The following secrets already exist in the destination: ";

const folderOrThrow = async (
  ctx: RequestContext,
  projectId: string,
  environment: string,
  path: string,
  side: "Source" | "Destination",
) => {
  const place = await resolveFolder(ctx.deps.db, projectId, environment, path);
  if (!place?.folder_id)
    throw new NotFoundError(`${side} folder with path '${path}' in environment with slug '${environment}' not found`);
  return place.folder_id;
};

type Place = { environment: string; secretPath: string };

const slugs = (secret: { tags: { slug: string }[] }) => secret.tags.map((t) => t.slug);

/** Moving takes a secret away (delete), so it must be fully visible there: describe and read its value. */
const assertMayTakeFrom = (ability: Ability, at: Place, secret: PlainSecret) => {
  const object = secretObject(at.environment, at.secretPath, secret.key, slugs(secret));
  assertSecretAction(ability, "delete", object);
  assertCanReadValue(ability, object);
  assertCanDescribe(ability, object);
};

/**
 * A destination secret the caller cannot read is never "the same" as the one moved, whatever its
 * value: comparing would answer, through which error comes back, whether a guessed value is right.
 */
const holdsSameValue = (ability: Ability, to: Place, current: PlainSecret, moved: PlainSecret) =>
  canReadValue(ability, secretObject(to.environment, to.secretPath, current.key, slugs(current))) &&
  current.value() === moved.value();

/**
 * POST /api/v4/secrets/move: in one transaction, each selected secret is created
 * in the destination folder (or overwrites a different value there when allowed), removed from the
 * source, versions recorded on both sides, and references to its old place follow it. Rights on
 * both sides are checked before anything in the destination is looked at.
 */
export const moveSecrets = async (ctx: RequestContext, body: MoveSecretsBody) => {
  const { project, ability } = await getProjectPermissionByRef(ctx, body);
  const from = { environment: body.sourceEnvironment, secretPath: body.sourceSecretPath };
  const to = { environment: body.destinationEnvironment, secretPath: body.destinationSecretPath };
  assertMayActIn(ability, "delete", from);
  assertMayActIn(ability, "create", to);
  assertMayActIn(ability, "edit", to);
  const sourceId = await folderOrThrow(ctx, project.id, from.environment, from.secretPath, "Source");
  const destinationId = await folderOrThrow(ctx, project.id, to.environment, to.secretPath, "Destination");
  for (const at of [from, to]) await ctx.deps.secretWriteGate.assertUnprotected(ctx, project.id, at, "moving secrets");
  const ids = [...new Set(body.secretIds)];
  if (!ids.every(isUuid)) throw new BadRequestError("Invalid secrets");
  // The keys of the last attempt's inserts (a transaction may be run again after a conflict).
  let pendingKeys: string[] = [];

  return inTransaction(ctx, async (trx) => {
    const key = await ensureProjectKey(ctx.deps, trx, project.id);
    const sources = (await lockFolderSecretsByIds(trx, sourceId, ids)).map((row) => openSecretRow(key, row));
    if (sources.length !== ids.length) throw new BadRequestError("Invalid secrets");
    for (const secret of sources) {
      assertMayTakeFrom(ability, from, secret);
      // Stored in the destination under its own name and tags, whether created or written over a namesake.
      assertMayStore(ability, "create", to, secret);
      assertMayStore(ability, "edit", to, secret);
    }
    noteAudit(ctx, {
      metadata: {
        secretKeys: sources.map((s) => s.key),
        secretIds: ids,
        sourceEnvironment: from.environment,
        sourceSecretPath: from.secretPath,
        destinationEnvironment: to.environment,
        destinationSecretPath: to.secretPath,
      },
    });

    const existing = new Map(
      (
        await lockSecretsByKeys(
          trx,
          destinationId,
          sources.map((s) => s.key),
        )
      ).map((row) => [row.key, openSecretRow(key, row)]),
    );
    const creates = sources.filter((s) => !existing.has(s.key));
    const overwrites = sources.filter(
      (s) => existing.has(s.key) && !holdsSameValue(ability, to, existing.get(s.key)!, s),
    );
    if (overwrites.length > 0 && !body.shouldOverwrite)
      throw new BadRequestError(existsMessage + overwrites.map((s) => s.key).join(","));
    if (creates.length + overwrites.length === 0)
      throw new BadRequestError("Selected secrets already exist in the destination.");
    for (const secret of overwrites) assertMayStore(ability, "edit", to, existing.get(secret.key)!);

    pendingKeys = creates.map((s) => s.key);
    const created: SecretState[] = creates.map((s) => ({ ...stateOf(s), id: newSecretId(), folderId: destinationId }));
    await insertNewSecrets(ctx, trx, key, created);
    for (const secret of overwrites) {
      const before = stateOf(existing.get(secret.key)!);
      const { id: _id, folderId: _folder, ...carried } = stateOf(secret);
      await writeSecretUpdate(ctx, trx, key, before, { ...before, ...carried });
    }
    await deleteFolderSecretsByIds(
      trx,
      sourceId,
      sources.map((s) => s.id),
    );
    await recordDeletions(
      ctx,
      trx,
      key,
      sources.map((s) => ({ state: stateOf(s), version: s.version })),
    );
    const relocations = sources.map((s) => ({ from: { ...from, key: s.key }, to: { ...to, key: s.key } }));
    await rewriteDependents(ctx, trx, key, ability, project.id, relocations);
    return { isSourceUpdated: true, isDestinationUpdated: true };
  }).catch((error: unknown) => asKeyConflict(existsMessage + pendingKeys.join(","))(error));
};
