import type { AppDeps, AppJob } from "../../context";
import { inTransaction } from "../../db/transaction";
import { loop } from "../../lib/loop";
import { asPlatformChange } from "../audit/audit-scope";
import { RotationBusyError, runRotation } from "./rotation-engine";
import { findDueRotations } from "./rotation.repository";

/** Rotations taken per pass, and connections worked on at once (each connection's rotations one after another). */
const BATCH = 100;
const PARALLEL_CONNECTIONS = 4;

/**
 * One pass: every due rotation (and every rotation a crash left half-way) on this instance, unless
 * another instance holds it. Rotations of one connection run one after another; different
 * connections run side by side. Each outcome writes `secret-rotation-rotate-secrets` with the
 * platform as actor.
 */
export const runDueRotations = async (deps: AppDeps) => {
  const due = await inTransaction(deps.db, (trx) => findDueRotations(trx, new Date(deps.clock.now()), BATCH));
  const orgOf = new Map(due.map((d) => [d.id, d.org_id]));
  const byConnection = new Map<string, string[]>();
  for (const { id, connection_id } of due)
    byConnection.set(connection_id, [...(byConnection.get(connection_id) ?? []), id]);
  const queues = [...byConnection.values()];
  let rotated = 0;
  const worker = async () => {
    for (let queue = queues.shift(); queue; queue = queues.shift()) {
      for (const id of queue) {
        const outcome = await runRotation(deps, id, {
          manual: false,
          change: (row, result) =>
            asPlatformChange(
              deps,
              {
                orgId: orgOf.get(row.id) ?? null,
                projectId: row.project_id,
                type: "secret-rotation-rotate-secrets",
                metadata: {
                  rotationId: row.id,
                  type: row.type,
                  connectionId: row.connection_id,
                  folderId: row.folder_id,
                  status: result.status,
                  ...(result.message ? { message: result.message } : {}),
                },
              },
              async (ctx) => ctx,
            ),
        }).catch((error: unknown) => {
          if (error instanceof RotationBusyError) return undefined;
          throw error;
        });
        if (outcome?.ok) rotated += 1;
      }
    }
  };
  await Promise.all(Array.from({ length: PARALLEL_CONNECTIONS }, worker));
  return { due: due.length, rotated };
};

export const secretRotationJob: AppJob = {
  name: "secret-rotation",
  start: (deps) =>
    loop(
      deps.env.ROTATION_INTERVAL_MS,
      () => runDueRotations(deps),
      (error) => {
        deps.metrics.jobFailures.inc({ job: "secret-rotation" });
        deps.logger.error({ err: error }, "secret rotation pass failed");
      },
    ),
};
