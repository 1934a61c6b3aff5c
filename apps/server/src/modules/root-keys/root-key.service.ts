import { rmSync, writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { noteAudit, type RequestContext } from "../../context";
import { afterCommit, inTransaction } from "../../db/transaction";
import type { SealKind } from "../../crypto/root-seal";
import { BadRequestError, ConflictError, ForbiddenError, NotFoundError } from "../../errors";
import { freshMaterial, resealRow, rootKeyContext, sealOf } from "./root-key.boot";
import { insertRootKey, listRootKeys, lockRootKeys, markRootKey } from "./root-key.repository";
import { countAllNotUnder } from "./root-key-rotation";
import {
  findLatestRotation,
  findRotation,
  findRunningRotation,
  insertRotation,
  type RotationRow,
} from "./rotation.repository";

/** Pages of a table the rotation walks (`SEALED_TABLES`), for a check that every value opens. */
export { sealedRowsAfter } from "./root-key.repository";

const requireInstanceAdmin = (ctx: RequestContext) => {
  if (!ctx.actor.isInstanceAdmin) throw new ForbiddenError("Only instance admins can manage the root key");
};

const rotationDto = (row: RotationRow) => ({
  id: row.id,
  status: row.status,
  fromVersion: row.from_version,
  toVersion: row.to_version,
  total: row.total,
  rewrapped: row.rewrapped,
  startedAt: row.started_at.toISOString(),
  completedAt: row.completed_at?.toISOString() ?? null,
  error: row.error,
});

/** The seal of the active version: every live version is sealed by the same one. */
const strategyOf = (rows: { state: string; sealed_by: SealKind }[]) =>
  rows.find((row) => row.state === "active")?.sealed_by ?? "SOFTWARE";

export const getRootKey = async (ctx: RequestContext) => {
  requireInstanceAdmin(ctx);
  const rows = await listRootKeys(ctx.deps.db);
  const latest = await findLatestRotation(ctx.deps.db);
  return {
    rootKey: {
      strategy: strategyOf(rows),
      activeVersion: rows.find((row) => row.state === "active")?.version ?? 0,
      versions: rows.map((row) => ({
        version: row.version,
        state: row.state,
        createdAt: row.created_at.toISOString(),
        retiredAt: row.retired_at?.toISOString() ?? null,
      })),
      rotation: latest ? rotationDto(latest) : null,
    },
  };
};

export const getRotation = async (ctx: RequestContext, rotationId: string) => {
  requireInstanceAdmin(ctx);
  const row = await findRotation(ctx.deps.db, rotationId);
  if (!row) throw new NotFoundError(`Root key rotation with ID '${rotationId}' not found`);
  return { rotation: rotationDto(row) };
};

/**
 * Creates version N+1 (sealed by the seal in use), makes it active and N retiring, and records a
 * running rotation counting the rows to re-wrap, all under the root-keys lock; every instance hears
 * of the new version through the table's notice, and the job (on any instance) does the re-wrap.
 */
export const startRootKeyRotation = async (ctx: RequestContext) => {
  requireInstanceAdmin(ctx);
  const { keyring, seals } = ctx.deps.rootKeys;
  const material = await freshMaterial(seals);
  try {
    const rotation = await inTransaction(ctx, async (trx) => {
      await lockRootKeys(trx);
      if (await findRunningRotation(trx)) throw new ConflictError("A root key rotation is already running");
      const rows = await listRootKeys(trx);
      const active = rows.find((row) => row.state === "active")!;
      const seal = sealOf(seals, active.sealed_by);
      if (!seal) {
        throw new BadRequestError(
          `The root keys are sealed by ${active.sealed_by}, which this instance is not configured with`,
        );
      }
      const to = Math.max(...rows.map((row) => row.version)) + 1;
      await markRootKey(trx, active.version, "retiring");
      await insertRootKey(trx, {
        version: to,
        sealed: await seal.seal(material, rootKeyContext(to)),
        sealed_by: seal.kind,
        seal_fingerprint: seal.fingerprint,
        state: "active",
      });
      const total = await countAllNotUnder(trx, to);
      const row = await insertRotation(trx, {
        from_version: active.version,
        to_version: to,
        total,
        org_id: ctx.actor.orgId,
      });
      noteAudit(ctx, { metadata: { rotationId: row.id, fromVersion: active.version, toVersion: to, total } });
      afterCommit(trx, () => {
        keyring.hold(to, material);
        keyring.activate(to);
        ctx.deps.rootKeys.wake();
      });
      return row;
    });
    return { rotation: rotationDto(rotation) };
  } finally {
    material.fill(0);
  }
};

export const listEncryptionStrategies = async (ctx: RequestContext) => {
  requireInstanceAdmin(ctx);
  const current = strategyOf(await listRootKeys(ctx.deps.db));
  return {
    strategies: (["SOFTWARE", "HSM"] as const).map((strategy) => ({ strategy, enabled: strategy === current })),
  };
};

const NOT_CONFIGURED: Record<SealKind, string> = {
  HSM: "The HSM is not configured on this instance: set HSM_LIB_PATH, HSM_PIN and HSM_KEY_LABEL and restart",
  SOFTWARE: "ENCRYPTION_KEY is not set on this instance: set it and restart to seal the root keys with it",
};

/**
 * Re-seals every live version with the other seal in one transaction (the material, the data keys and
 * everything under them stay as they are). Moving to the HSM also overwrites and deletes the
 * `DATA_DIR/root.key` this instance generated, if it used one.
 */
export const updateEncryptionStrategy = async (ctx: RequestContext, body: { strategy: SealKind }) => {
  requireInstanceAdmin(ctx);
  const { seals } = ctx.deps.rootKeys;
  const target = sealOf(seals, body.strategy);
  if (!target || (body.strategy === "SOFTWARE" && seals.softwareKeyFile)) {
    throw new BadRequestError(NOT_CONFIGURED[body.strategy]);
  }
  const from = await inTransaction(ctx, async (trx) => {
    await lockRootKeys(trx);
    if (await findRunningRotation(trx)) {
      throw new ConflictError("A root key rotation is running; change the seal once it has completed");
    }
    const rows = (await listRootKeys(trx)).filter((row) => row.state !== "retired");
    const current = strategyOf(rows);
    for (const row of rows) {
      if (row.sealed_by === body.strategy && row.seal_fingerprint === target.fingerprint) continue;
      await resealRow(trx, seals, row, target);
    }
    noteAudit(ctx, { metadata: { from: current, to: body.strategy } });
    return current;
  });
  if (body.strategy === "HSM" && seals.softwareKeyFile) {
    writeFileSync(seals.softwareKeyFile, randomBytes(64));
    rmSync(seals.softwareKeyFile, { force: true });
  }
  return {
    message:
      from === body.strategy
        ? `The root keys were already sealed by ${from}`
        : `The root keys are now sealed by ${body.strategy}`,
    strategy: body.strategy,
  };
};
