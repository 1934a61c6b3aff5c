import { SECRET_SYNC_DESTINATIONS, type SecretSyncDestination, type SecretSyncPlan } from "@keyward/contract";
import { noteAudit, type RequestContext } from "../../context";
import { inTransaction } from "../../db/transaction";
import { AppError, BadRequestError } from "../../errors";
import { getProjectPermission } from "../authz/project-access";
import { SECRET_MANAGER } from "../folders/folder.service";
import { assertSecretAction } from "../secrets/secret-access";
import { assertOnSync, checkSource, nameOf, requireSync, type HeldSync } from "./secret-sync.access";
import { answerOf, deleteSyncWithEvent, type CreateSyncBody } from "./secret-sync.service";
import { claimSync, planFor, prepare, SyncBusyError, type Claim, type Prepared } from "./sync-engine";
import type { DestinationSession } from "./destinations/destination";
import { applyImport, lockClaimed, readImport, type ImportBehavior } from "./sync-run";
import { listOwnedElsewhere, listOwnedKeys, releaseKeys, updateSync, type SyncRow } from "./secret-sync.repository";
import { DRIVERS } from "./destinations";
import { planRun, desiredOf } from "./sync-plan";
import { readFolderForPlatform } from "../secrets/secret-platform-read";

const BUSY = "A job for this sync is already in progress. Please try again shortly.";

const errorText = (error: unknown) => (error instanceof Error ? error.message : String(error)).slice(0, 1_024);

/** Claims the sync for work done within the request; 400 while another run holds it. */
const claimNow = async (ctx: RequestContext, row: SyncRow, column: "import_status" | "remove_status") => {
  const claim = await claimSync(ctx.deps, row.id, { column }).catch((error: unknown) => {
    if (error instanceof SyncBusyError) throw new BadRequestError(BUSY);
    throw error;
  });
  if (!claim) throw new BadRequestError(BUSY);
  return claim;
};

/** Uses the destination within the request; a destination failure is the answer's status, not an error. */
const useDestination = async <T>(
  ctx: RequestContext,
  row: SyncRow,
  needsFolder: boolean,
  work: (prepared: Prepared, session: DestinationSession) => Promise<T>,
): Promise<{ value?: T; failure?: string }> => {
  try {
    const prepared = await prepare(ctx.deps, row, needsFolder);
    return {
      value: await prepared.driver.use(ctx.deps, prepared.connection, prepared.config, prepared.options, (s) =>
        work(prepared, s),
      ),
    };
  } catch (error) {
    if (error instanceof AppError) throw error;
    return { failure: errorText(error) };
  }
};

/** POST …/sync-secrets: the sync is due now; this instance runs it at once, another may first. */
export const triggerSecretSync = async (ctx: RequestContext, destination: SecretSyncDestination, id: string) => {
  const held = await requireSync(ctx, destination, id);
  assertOnSync(held, "sync-secrets");
  if (!held.row.folder_id)
    throw new BadRequestError(
      "Invalid source configuration: folder no longer exists. Please configure a valid source and try again.",
    );
  await inTransaction(ctx, async (trx) => {
    await updateSync(trx, id, {
      sync_status: "pending",
      due_at: new Date(ctx.deps.clock.now()),
      verify_next: true,
    });
    noteAudit(ctx, {
      projectId: held.row.project_id,
      metadata: { syncId: id, destination, syncStatus: "pending", trigger: "manual" },
    });
  });
  ctx.deps.secretSyncWake.wake();
  return answerOf(ctx, id);
};

/**
 * POST …/remove-secrets, and DELETE with removeSecrets: removes from the destination exactly the
 * names this sync wrote (whatever the folder holds now), within the request. The answer's
 * `removeStatus` says how it went; the names removed stop being this sync's.
 */
const removeOwned = async (ctx: RequestContext, held: HeldSync) => {
  const { row } = held;
  const claim = await claimNow(ctx, row, "remove_status");
  const owned = (await listOwnedKeys(ctx.deps.db, row.id)).map((r) => r.destination_key);
  const removed: string[] = [];
  const outcome = await useDestination(ctx, row, false, async (_prepared, session) => {
    for (const name of owned) {
      await session.remove(name);
      removed.push(name);
    }
  });
  await finishWithClaim(ctx, row, claim, async (trx) => {
    await releaseKeys(trx, row.id, removed);
    await updateSync(trx, row.id, {
      remove_status: outcome.failure ? "failed" : "succeeded",
      last_remove_message: outcome.failure ?? null,
      last_remove_job_id: claim.token,
      ...(outcome.failure ? {} : { last_removed_at: new Date(ctx.deps.clock.now()) }),
    });
    noteAudit(ctx, {
      projectId: row.project_id,
      metadata: {
        syncId: row.id,
        destination: row.destination,
        removeStatus: outcome.failure ? "failed" : "succeeded",
        removeMessage: outcome.failure ?? null,
        removedSecretKeys: removed,
      },
    });
  });
  return outcome;
};

/** Runs `work` in the request's transaction if the claim still holds the sync, then lets the claim go. */
const finishWithClaim = (
  ctx: RequestContext,
  row: SyncRow,
  claim: Claim,
  work: (trx: Parameters<Parameters<typeof inTransaction>[1]>[0]) => Promise<void>,
) =>
  inTransaction(ctx, async (trx) => {
    const locked = await lockClaimed(trx, row.id, claim);
    if (!locked) return;
    await work(trx);
    const due = locked.due_at && new Date(locked.due_at).getTime() !== claim.until.getTime() ? locked.due_at : null;
    await updateSync(trx, row.id, { claim_token: null, claimed_until: null, due_at: due });
  });

export const removeSyncedSecrets = async (ctx: RequestContext, destination: SecretSyncDestination, id: string) => {
  const held = await requireSync(ctx, destination, id);
  assertOnSync(held, "remove-secrets");
  await removeOwned(ctx, held);
  return answerOf(ctx, id);
};

/** DELETE: with removeSecrets, the owned names go first and the sync is deleted only if that worked (else 400). */
export const deleteSecretSync = async (
  ctx: RequestContext,
  destination: SecretSyncDestination,
  id: string,
  removeSecrets: boolean,
) => {
  const held = await requireSync(ctx, destination, id);
  assertOnSync(held, "delete");
  if (removeSecrets) {
    assertOnSync(held, "remove-secrets");
    const outcome = await removeOwned(ctx, held);
    if (outcome.failure)
      throw new BadRequestError(`The sync was kept: removing its secrets failed: ${outcome.failure}`.slice(0, 1_024));
  }
  const answer = await answerOf(ctx, id);
  await deleteSyncWithEvent(ctx, held, removeSecrets);
  return answer;
};

/**
 * POST …/import-secrets: the destination's secrets come into the folder (missing keys, or differing
 * values too), within the request; the names read become this sync's. Writing into the folder needs
 * the caller's own rights to create and edit its secrets.
 */
export const importSyncedSecrets = async (
  ctx: RequestContext,
  destination: SecretSyncDestination,
  id: string,
  behavior: ImportBehavior,
) => {
  const held = await requireSync(ctx, destination, id);
  assertOnSync(held, "import-secrets");
  if (!SECRET_SYNC_DESTINATIONS[destination].canImportSecrets)
    throw new BadRequestError(`${nameOf(destination)} does not support importing secrets.`);
  // Judged on the folder as a whole: the keys an import brings are not known before it runs.
  assertSecretAction(held.ability, "create", { ...held.at });
  assertSecretAction(held.ability, "edit", { ...held.at });
  const { row } = held;
  const claim = await claimNow(ctx, row, "import_status");
  const outcome = await useDestination(ctx, row, true, async (prepared, session) => ({
    folderId: prepared.folder.folderId,
    imported: await readImport(prepared, session, behavior, ctx.deps),
  }));
  await finishWithClaim(ctx, row, claim, async (trx) => {
    if (outcome.value)
      await applyImport(
        { deps: ctx.deps, scope: ctx.scope, actor: ctx.actor },
        trx,
        row,
        outcome.value.folderId,
        outcome.value.imported,
      );
    await updateSync(trx, row.id, {
      import_status: outcome.failure ? "failed" : "succeeded",
      last_import_message: outcome.failure ?? null,
      last_import_job_id: claim.token,
      ...(outcome.failure ? {} : { last_imported_at: new Date(ctx.deps.clock.now()) }),
    });
    noteAudit(ctx, {
      projectId: row.project_id,
      metadata: {
        syncId: row.id,
        destination,
        importBehavior: behavior,
        importStatus: outcome.failure ? "failed" : "succeeded",
        importMessage: outcome.failure ?? null,
        importedSecretKeys: Object.keys(outcome.value?.imported.toWrite ?? {}),
      },
    });
  });
  return answerOf(ctx, id);
};

/** Of `names` at the place `ref`, those some sync owns (a new sync owns none). */
const ownedAt = (ctx: RequestContext, ref: string, names: readonly string[]) =>
  listOwnedElsewhere(ctx.deps.db, ref, "00000000-0000-0000-0000-000000000000", names);

const publicPlan = ({ create, update, delete: del, unchanged, skipped }: SecretSyncPlan): SecretSyncPlan => ({
  create,
  update,
  delete: del,
  unchanged,
  skipped,
});

const planOrRefusal = async <T>(work: () => Promise<T>) =>
  work().catch((error: unknown) => {
    if (error instanceof AppError) throw error;
    throw new BadRequestError(`Could not plan the sync: ${errorText(error)}`);
  });

/** POST …/:syncId/plan: the next run, name by name; nothing changes (read plus use of the connection). */
export const planSecretSync = async (ctx: RequestContext, destination: SecretSyncDestination, id: string) => {
  const held = await requireSync(ctx, destination, id);
  assertOnSync(held, "read");
  const source = { projectId: held.row.project_id, ...held.at, connectionId: held.row.connection_id };
  await checkSource(ctx, destination, held.ability, source, "read", held.row.destination_config);
  const prepared = await prepare(ctx.deps, held.row);
  const plan = await planOrRefusal(() =>
    prepared.driver.use(ctx.deps, prepared.connection, prepared.config, prepared.options, (session) =>
      planFor(ctx.deps, held.row, prepared, session),
    ),
  );
  return { plan: publicPlan(plan) };
};

/** POST …/plan: what a new sync's first run would do; nothing is created (create's checks, read of the destination). */
export const planNewSecretSync = async (
  ctx: RequestContext,
  destination: SecretSyncDestination,
  body: CreateSyncBody,
) => {
  const { ability } = await getProjectPermission(ctx, body.projectId, SECRET_MANAGER);
  const { folder, connection, ref } = await checkSource(
    ctx,
    destination,
    ability,
    body,
    "read",
    body.destinationConfig,
  );
  const driver = DRIVERS[destination];
  const options = body.syncOptions;
  const plan = await planOrRefusal(async () => {
    const values = await readFolderForPlatform(ctx.deps, {
      projectId: body.projectId,
      folderId: folder.id,
      environment: body.environment,
      secretPath: body.secretPath,
    });
    const { desired, invalid } = desiredOf(driver, body.destinationConfig, options, body.environment, values);
    return driver.use(ctx.deps, connection, body.destinationConfig, options, async (session) => {
      const found = await session.list((name) => desired.has(name));
      const elsewhere = await ownedAt(ctx, ref, [...new Set([...desired.keys(), ...found.keys()])]);
      return planRun({
        driver,
        config: body.destinationConfig,
        environment: body.environment,
        options,
        desired,
        invalid,
        found,
        owned: new Map(),
        ownedElsewhere: new Set(elsewhere),
        readBack: true,
        hmacOf: () => "",
      });
    });
  });
  return { plan: publicPlan(plan) };
};
