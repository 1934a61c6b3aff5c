import { inTransaction } from "../../db/transaction";
import { SECRET_VALUE_HIDDEN_MASK } from "@keyward/contract";
import { BadRequestError, NotFoundError } from "../../errors";
import { folderPathNotFound } from "../folders/folder.service";
import {
  canReadValue,
  refusePersonal,
  getProjectPermissionByRef,
  secretObject,
  type ProjectRef,
} from "./secret-access";
import { toSecretRaw } from "./secret.dto";
import type { RequestContext } from "../../context";
import { asKeyConflict } from "./secret-persist";
import { resolveFolder } from "./secret.repository";
import {
  applyCreates,
  applyDeletes,
  applyUpdates,
  duplicates,
  readSecretStamps,
  type BatchCreateItem,
  type BatchUpdateItem,
} from "./secret-apply";
import { writeScope } from "./secret-write.service";

export type { BatchCreateItem, BatchUpdateItem };

type Scope = ProjectRef & { environment: string; secretPath: string };

/** POST /api/v3/secrets/batch/raw and /api/v4/secrets/batch: all or nothing. */
export const createSecretsBatch = async (ctx: RequestContext, body: Scope & { secrets: BatchCreateItem[] }) => {
  const { project, ability, folderId } = await writeScope(ctx, body);
  const place = { projectId: project.id, environment: body.environment, secretPath: body.secretPath };
  const keys = body.secrets.map((s) => s.secretKey);
  const repeated = duplicates(keys);
  if (repeated.length > 0) throw new BadRequestError(`Secret already exist: ${repeated.join(",")}`);
  const target = { ...place, ability, folderId };
  const approval = await ctx.deps.secretWriteGate.propose(
    ctx,
    target,
    body.secrets.map((item) => ({ op: "create", item })),
  );
  if (approval) return { approval };
  const created = await inTransaction(ctx, (trx) => applyCreates(ctx, trx, target, body.secrets)).catch(
    asKeyConflict(`Secret already exist: ${keys.join(",")}`),
  );
  return { secrets: created.map((secret) => toSecretRaw(secret, place, secret.value())) };
};

/**
 * PATCH /api/v3/secrets/batch/raw and /api/v4/secrets/batch: items grouped by
 * path; in `upsert` mode missing keys are created. All or nothing.
 */
export const updateSecretsBatch = async (
  ctx: RequestContext,
  body: Scope & { mode: "failOnNotFound" | "upsert"; secrets: BatchUpdateItem[] },
) => {
  const { project, ability } = await getProjectPermissionByRef(ctx, body);
  const byPath = new Map<string, BatchUpdateItem[]>();
  for (const item of body.secrets) {
    const path = item.secretPath ?? body.secretPath;
    byPath.set(path, [...(byPath.get(path) ?? []), item]);
  }
  const folders = new Map<string, string>();
  for (const path of [...byPath.keys()].sort()) {
    const place = await resolveFolder(ctx.deps.db, project.id, body.environment, path);
    if (!place)
      throw new NotFoundError(
        `Environment with slug '${body.environment}' in project with ID '${project.id}' not found`,
      );
    if (!place.folder_id) throw folderPathNotFound("null", body.environment);
    folders.set(path, place.folder_id);
    const repeated = duplicates(byPath.get(path)!.map((i) => i.secretKey));
    if (repeated.length > 0) throw new BadRequestError(`Secret already exist: ${repeated.join(",")}`);
  }
  const target = { projectId: project.id, ability, environment: body.environment };
  const approval = await proposeUpdates(ctx, target, folders, byPath, body.mode);
  if (approval) return { approval };
  const results = await inTransaction(ctx, (trx) => applyUpdates(ctx, trx, target, folders, byPath, body.mode)).catch(
    asKeyConflict(`Secret with new name already exists: ${body.secrets.map((s) => s.newSecretName).join(",")}`),
  );
  return {
    secrets: results.map(({ secret, secretPath }) => {
      const readable = canReadValue(
        ability,
        secretObject(
          body.environment,
          secretPath,
          secret.key,
          secret.tags.map((t) => t.slug),
        ),
      );
      return {
        ...toSecretRaw(
          secret,
          { projectId: project.id, environment: body.environment, secretPath },
          readable ? secret.value() : SECRET_VALUE_HIDDEN_MASK,
        ),
        secretValueHidden: !readable,
      };
    }),
  };
};

/**
 * A batch update into a protected folder becomes a change request. A request holds the changes of one
 * folder: a batch that spans folders and touches a protected one is refused, so nothing is half-applied.
 * In `upsert` mode a key missing now is proposed as a create.
 */
const proposeUpdates = async (
  ctx: RequestContext,
  target: { projectId: string; ability: Parameters<typeof applyUpdates>[2]["ability"]; environment: string },
  folders: ReadonlyMap<string, string>,
  byPath: ReadonlyMap<string, readonly BatchUpdateItem[]>,
  mode: "failOnNotFound" | "upsert",
) => {
  for (const [path, items] of byPath) {
    const folderId = folders.get(path)!;
    const existing =
      mode === "upsert"
        ? new Set(
            (
              await readSecretStamps(
                ctx.deps.db,
                folderId,
                items.map((i) => i.secretKey),
              )
            ).map((s) => s.key),
          )
        : undefined;
    const changes = items.map(({ secretPath: _path, ...item }) =>
      existing && !existing.has(item.secretKey)
        ? {
            op: "create" as const,
            item: {
              ...item,
              secretKey: item.newSecretName ?? item.secretKey,
              secretValue: item.secretValue ?? "",
              secretComment: item.secretComment ?? "",
            },
          }
        : { op: "update" as const, item },
    );
    const approval = await ctx.deps.secretWriteGate.propose(ctx, { ...target, folderId, secretPath: path }, changes);
    if (!approval) continue;
    if (byPath.size > 1) throw new BadRequestError("A change to a protected folder must name that folder alone");
    return approval;
  }
  return undefined;
};

/** DELETE /api/v3/secrets/batch/raw and /api/v4/secrets/batch: all or nothing. */
export const deleteSecretsBatch = async (
  ctx: RequestContext,
  body: Scope & { secrets: { secretKey: string; type: "shared" | "personal" }[] },
) => {
  const { project, ability, folderId } = await writeScope(ctx, body);
  for (const item of body.secrets) refusePersonal(ctx.actor, item.type, "delete");
  // A batch deletes shared secrets (with their personal overrides); a person deletes their own one at a time.
  if (body.secrets.some((s) => s.type === "personal"))
    throw new BadRequestError("Personal secrets are deleted one at a time");
  const keys = [...new Set(body.secrets.map((s) => s.secretKey))];
  const place = { projectId: project.id, environment: body.environment, secretPath: body.secretPath };
  const target = { ...place, ability, folderId };
  const approval = await ctx.deps.secretWriteGate.propose(
    ctx,
    target,
    keys.map((secretKey) => ({ op: "delete", secretKey })),
  );
  if (approval) return { approval };
  const deleted = await inTransaction(ctx, (trx) => applyDeletes(ctx, trx, target, keys));
  const secrets = deleted.map((secret) => {
    const readable = canReadValue(
      ability,
      secretObject(
        body.environment,
        body.secretPath,
        secret.key,
        secret.tags.map((t) => t.slug),
      ),
    );
    return {
      ...toSecretRaw(secret, place, readable ? secret.value() : SECRET_VALUE_HIDDEN_MASK),
      secretValueHidden: !readable,
    };
  });
  return { secrets };
};
