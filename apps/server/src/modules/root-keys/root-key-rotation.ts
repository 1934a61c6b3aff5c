import type { AppDeps } from "../../context";
import { afterCommit, inTransaction } from "../../db/transaction";
import { recordPlatformChange } from "../audit/audit-scope";
import { SEALED_TABLES, type SealedTable } from "./sealed-columns";
import {
  countNotUnder,
  isStale,
  lockBatchAfter,
  lockRetiringVersions,
  retireVersions,
  updateSealedRows,
} from "./root-key.repository";
import {
  claimRotation,
  completeRotation,
  failRotation,
  findRunningRotation,
  recordBatch,
  resetCursor,
  type RotationRow,
} from "./rotation.repository";

/** How long a claim on a running rotation lasts without a batch extending it: a crashed claimant's is taken over after. */
export const ROTATION_LEASE_MS = 30_000;

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Rows (of every registered table) holding a value not sealed under `version`. */
export const countAllNotUnder = async (db: Parameters<typeof countNotUnder>[0], version: number) => {
  let total = 0;
  for (const entry of SEALED_TABLES) total += await countNotUnder(db, entry, version);
  return total;
};

/** The row's values re-sealed under `version`, each opened with the version it names. */
const rewrapRow = (deps: AppDeps, entry: SealedTable, row: Record<string, string | null>, version: number) => {
  const values: Record<string, string> = {};
  for (const column of entry.columns) {
    const stored = row[column.name];
    if (!stored || !isStale(stored, version)) continue;
    const context = column.context(row as Record<string, string>);
    try {
      values[column.name] = deps.rootKeys.keyring.reseal(stored, context, version);
    } catch (error) {
      throw new RewrapError(
        `${entry.table}.${column.name} of ${row[entry.key]} does not open: ${(error as Error).message}`,
      );
    }
  }
  return values;
};

class RewrapError extends Error {}
class LeaseLost extends Error {}

/** One batch of one table, in one transaction: the rows locked, re-sealed, the cursor and count moved. */
const rewrapBatch = async (deps: AppDeps, rotation: RotationRow, entry: SealedTable, after: string | undefined) =>
  inTransaction(deps.db, async (trx) => {
    const batch = await lockBatchAfter(trx, entry, after, rotation.to_version, deps.env.ROOT_KEY_REWRAP_BATCH_SIZE);
    await updateSealedRows(
      trx,
      entry,
      batch.rows.map((row) => {
        const resealed = rewrapRow(deps, entry, row, rotation.to_version);
        return { key: row[entry.key]!, values: entry.columns.map((c) => resealed[c.name] ?? row[c.name] ?? null) };
      }),
    );
    const extended = await recordBatch(trx, rotation.id, deps.rootKeys.instanceId, {
      table: entry.table,
      last: batch.last,
      done: !batch.full,
      rewrapped: batch.rows.length,
      leaseUntil: new Date(deps.clock.now() + ROTATION_LEASE_MS),
    });
    if (!extended) throw new LeaseLost();
    return batch;
  });

/**
 * Retires the versions below the rotation's once nothing is sealed under them: their rows are locked
 * for update (so writers still sealing under them, who hold a share lock through the guard, finish
 * first and are counted), everything is re-counted, and only on zero is the material erased. A
 * non-zero count (a writer that had not heard of the new version) sends the job round again.
 */
const finish = (deps: AppDeps, rotation: RotationRow) =>
  inTransaction(deps.db, async (trx) => {
    const retiring = (await lockRetiringVersions(trx, rotation.to_version)).map((row) => row.version);
    const left = await countAllNotUnder(trx, rotation.to_version);
    if (left > 0) {
      await resetCursor(trx, rotation.id);
      return false;
    }
    const now = new Date(deps.clock.now());
    await retireVersions(trx, retiring, now);
    const completed = await completeRotation(trx, rotation.id, deps.rootKeys.instanceId, now);
    if (!completed) throw new LeaseLost();
    await recordPlatformChange(trx, deps, {
      orgId: rotation.org_id,
      projectId: null,
      type: "complete-root-key-rotation",
      metadata: {
        rotationId: rotation.id,
        fromVersion: rotation.from_version,
        toVersion: rotation.to_version,
        rewrapped: completed.rewrapped,
        retiredVersions: retiring,
      },
    });
    afterCommit(trx, () => {
      for (const version of retiring) if (deps.rootKeys.keyring.has(version)) deps.rootKeys.keyring.forget(version);
    });
    return true;
  });

/**
 * Drives the running rotation, if any, as far as it goes: claims it (or takes over a lapsed claim),
 * re-wraps every registered table batch by batch from its recorded cursor, pausing
 * ROOT_KEY_REWRAP_PAUSE_MS between batches, then retires the old versions. Answers what happened.
 */
export const driveRotation = async (
  deps: AppDeps,
  options: { maxBatches?: number } = {},
): Promise<"idle" | "busy" | "completed" | "failed"> => {
  const now = deps.clock.now();
  const rotation = await claimRotation(
    deps.db,
    deps.rootKeys.instanceId,
    new Date(now),
    new Date(now + ROTATION_LEASE_MS),
  );
  if (!rotation) return (await findRunningRotation(deps.db)) ? "busy" : "idle";
  if (!deps.rootKeys.keyring.has(rotation.to_version)) await deps.rootKeys.refresh();
  const cursor: Record<string, string> = { ...rotation.cursor };
  const pauseMs = deps.env.ROOT_KEY_REWRAP_PAUSE_MS;
  let budget = options.maxBatches ?? Infinity;
  try {
    for (let round = 0; round < 3; round += 1) {
      for (const entry of SEALED_TABLES) {
        if (cursor[`${entry.table}:done`]) continue;
        for (;;) {
          if (budget-- <= 0) return "busy";
          const batch = await rewrapBatch(deps, rotation, entry, cursor[entry.table]);
          if (batch.last !== undefined) cursor[entry.table] = batch.last;
          if (pauseMs > 0) await pause(pauseMs);
          if (!batch.full) break;
        }
        cursor[`${entry.table}:done`] = "1";
      }
      if (await finish(deps, rotation)) return "completed";
      for (const key of Object.keys(cursor)) delete cursor[key];
    }
    return "busy";
  } catch (error) {
    if (error instanceof LeaseLost) return "busy";
    if (error instanceof RewrapError) {
      await failRotation(deps.db, rotation.id, error.message, new Date(deps.clock.now()));
      deps.logger.error({ rotationId: rotation.id, reason: error.message }, "root key rotation failed");
      return "failed";
    }
    throw error;
  }
};
