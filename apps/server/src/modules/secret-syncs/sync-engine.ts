import { createHmac, randomUUID } from "node:crypto";
import type { SecretSyncDestination } from "@keyward/contract";
import type { AppDeps } from "../../context";
import { inTransaction } from "../../db/transaction";
import { openConnectionById, type UsableConnection } from "../app-connections/app-connection.service";
import { lookupFolderPlaces } from "../folders/folder.service";
import { readFolderForPlatform } from "../secrets/secret-platform-read";
import { DRIVERS } from "./destinations";
import type { DestinationDriver, DestinationSession } from "./destinations/destination";
import type { DestinationError } from "./destinations/errors";
import { DestinationConflict } from "./destinations/errors";
import { desiredOf, planRun, type SyncOptions, type WorkPlan } from "./sync-plan";
import {
  claimKeys,
  countConnectionRuns,
  listOwnedElsewhere,
  listOwnedKeys,
  lockSync,
  updateSync,
  type SyncRow,
} from "./secret-sync.repository";

/** Runs of one connection's syncs at once, across instances. */
const RUNS_PER_CONNECTION = 5;

/** The sync is being run (by this instance or another): try again shortly. */
export class SyncBusyError extends Error {}

/** Why a run cannot start: its folder or connection is gone (not retried until the sync is changed). */
export class SyncSourceError extends Error {}

export type Claim = { token: string; until: Date };

/**
 * Claims a sync for one run. A due sync stays due until the claim's end, so a run cut short by a crash
 * is picked up again when its claim expires; a run that completes clears it unless a change came meanwhile.
 */
export const claimSync = (
  deps: AppDeps,
  id: string,
  status?: { column: "sync_status" | "import_status" | "remove_status" },
) =>
  inTransaction(deps.db, async (trx): Promise<Claim | undefined> => {
    const locked = await lockSync(trx, id);
    if (!locked) return undefined;
    const now = new Date(deps.clock.now());
    if (locked.claimed_until && new Date(locked.claimed_until) > now) throw new SyncBusyError();
    if ((await countConnectionRuns(trx, locked.connection_id, now)) >= RUNS_PER_CONNECTION) throw new SyncBusyError();
    const token = randomUUID();
    const until = new Date(now.getTime() + deps.env.SECRET_SYNC_CLAIM_TTL_S * 1_000);
    const due = locked.due_at && new Date(locked.due_at) <= now;
    await updateSync(trx, id, {
      claim_token: token,
      claimed_until: until,
      ...(due ? { due_at: until } : {}),
      ...(status ? { [status.column]: "running" } : {}),
    });
    return { token, until };
  });

/** The HMAC a sync records of a value it wrote (keyed per instance root, bound to the sync and the name). */
export const valueHmac = (deps: AppDeps, syncId: string) => {
  const key = deps.secretBox.deriveKey("secret-sync-values");
  return (name: string, value: string) =>
    createHmac("sha256", key)
      .update(syncId)
      .update("\u0000")
      .update(name)
      .update("\u0000")
      .update(value)
      .digest("base64url");
};

export type Prepared = {
  driver: DestinationDriver;
  connection: UsableConnection;
  folder: { folderId: string; environment: string; secretPath: string };
  options: SyncOptions & Record<string, unknown>;
  config: Record<string, unknown>;
};

/** What a run needs: the driver, the connection opened, and where the folder is now. */
export const prepare = async (deps: AppDeps, row: SyncRow, needsFolder = true): Promise<Prepared> => {
  const [place] = row.folder_id ? await lookupFolderPlaces(deps.db, [row.folder_id]) : [];
  if (!place && needsFolder)
    throw new SyncSourceError(
      "Invalid Secret Sync source configuration: folder no longer exists. Please update source environment and secret path.",
    );
  const connection = await openConnectionById(deps, row.connection_id);
  if (!connection) throw new SyncSourceError("The sync's app connection no longer exists.");
  return {
    driver: DRIVERS[row.destination as SecretSyncDestination],
    connection,
    folder: place
      ? { folderId: place.folder_id, environment: place.env_slug, secretPath: place.path }
      : { folderId: "", environment: row.env_slug, secretPath: row.secret_path },
    options: row.sync_options,
    config: row.destination_config,
  };
};

/** The next run's plan for `row`, from the folder's values and what the session lists at the destination. */
export const planFor = async (
  deps: AppDeps,
  row: SyncRow,
  prepared: Prepared,
  session: DestinationSession,
  readBack = true,
) => {
  const referenced = new Map<string, { environment: string; secretPath: string }>();
  const values = await readFolderForPlatform(deps, { projectId: row.project_id, ...prepared.folder }, (place) =>
    referenced.set(`${place.environment}\u0000${place.secretPath}`, place),
  );
  const { desired, invalid } = desiredOf(
    prepared.driver,
    prepared.config,
    prepared.options,
    prepared.folder.environment,
    values,
  );
  const owned = new Map((await listOwnedKeys(deps.db, row.id)).map((r) => [r.destination_key, r.value_hmac]));
  const found = await session.list((name) => readBack && (desired.has(name) || owned.has(name)));
  const names = [...new Set([...desired.keys(), ...found.keys()])];
  const ownedElsewhere = new Set(await listOwnedElsewhere(deps.db, row.destination_ref, row.id, names));
  const plan = planRun({
    driver: prepared.driver,
    config: prepared.config,
    environment: prepared.folder.environment,
    options: prepared.options,
    desired,
    invalid,
    found,
    owned,
    ownedElsewhere,
    readBack,
    hmacOf: valueHmac(deps, row.id),
  });
  return { ...plan, referenced: [...referenced.values()] };
};

export type RunResult = {
  /** The plan, and the folders the run read references from (a change there makes the sync due). */
  plan: WorkPlan & { referenced?: { environment: string; secretPath: string }[] };
  written: { name: string; hmac: string }[];
  deleted: string[];
  /** Names created at the destination by someone else between listing and writing: left alone. */
  conflicts: string[];
  failure?: DestinationError | Error;
};

/**
 * Carries a plan out: claims the names it will write (a name another sync owns is left out), writes,
 * then deletes. Stops at the first failure; what was done before it is in the result.
 */
export const carryOut = async (
  deps: AppDeps,
  row: SyncRow,
  session: DestinationSession,
  plan: WorkPlan,
): Promise<RunResult> => {
  const hmacOf = valueHmac(deps, row.id);
  const result: RunResult = { plan, written: [], deleted: [], conflicts: [] };
  const toClaim = [...plan.writes.keys(), ...plan.adopt.keys()];
  const claimed = new Set(await inTransaction(deps.db, (trx) => claimKeys(trx, row.id, row.destination_ref, toClaim)));
  for (const [name, value] of plan.adopt)
    if (claimed.has(name)) result.written.push({ name, hmac: hmacOf(name, value) });
    else result.conflicts.push(name);
  try {
    for (const [name, { value, exists }] of plan.writes) {
      if (!claimed.has(name)) {
        result.conflicts.push(name);
        continue;
      }
      try {
        await session.write(name, value, exists);
        result.written.push({ name, hmac: hmacOf(name, value) });
      } catch (error) {
        if (!(error instanceof DestinationConflict)) throw error;
        result.conflicts.push(name);
      }
    }
    for (const name of plan.delete) {
      await session.remove(name);
      result.deleted.push(name);
    }
  } catch (error) {
    result.failure = error instanceof Error ? error : new Error(String(error));
  }
  return result;
};
