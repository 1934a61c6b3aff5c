import type { AppDeps } from "../../context";
import { inTransaction, type Tx } from "../../db/transaction";
import { asPlatformChange, recordPlatformChange } from "../audit/audit-scope";
import { existingSecretNames, writeSystemSecrets } from "../secrets/secret-system-write";
import type { SecretWriter } from "../secrets/secret-persist";
import type { DestinationSession } from "./destinations/destination";
import { DestinationError } from "./destinations/errors";
import {
  carryOut,
  claimSync,
  planFor,
  prepare,
  SyncSourceError,
  type Claim,
  type Prepared,
  type RunResult,
} from "./sync-engine";
import { matchesKeySchema } from "./sync-plan";
import {
  claimKeys,
  confirmKeys,
  findSync,
  lockSync,
  releaseKeys,
  updateSync,
  type SyncRow,
} from "./secret-sync.repository";

/** Messages are cut to this length, as Infisical's are. */
const MESSAGE_MAX = 1_024;
const LISTED = 10;

const errorText = (error: unknown) => (error instanceof Error ? error.message : String(error)).slice(0, MESSAGE_MAX);

const listed = (names: readonly string[]) =>
  `${names.slice(0, LISTED).join(", ")}${names.length > LISTED ? ` and ${names.length - LISTED} more` : ""}`;

/** What a successful run left alone and why, and what drift it corrected; null when there is nothing to say. */
export const runMessage = (result: RunResult) => {
  const by = (reason: string) => result.plan.skipped.filter((s) => s.reason === reason).map((s) => s.key);
  const parts: string[] = [];
  const unowned = [...by("exists-unowned"), ...result.conflicts];
  if (unowned.length > 0)
    parts.push(
      `Left alone ${unowned.length} destination secret(s) this sync did not write: ${listed(unowned)} (syncOptions.unownedSecrets "overwrite" takes them over).`,
    );
  const elsewhere = by("owned-by-another-sync");
  if (elsewhere.length > 0) parts.push(`Left to the sync that wrote them: ${listed(elsewhere)}.`);
  const invalid = by("invalid-name");
  if (invalid.length > 0) parts.push(`Not valid names at the destination: ${listed(invalid)}.`);
  if (result.plan.drifted.length > 0)
    parts.push(
      `Corrected ${result.plan.drifted.length} secret(s) changed at the destination: ${listed(result.plan.drifted)}.`,
    );
  return parts.length > 0 ? parts.join(" ").slice(0, MESSAGE_MAX) : null;
};

/** A failed attempt's wait before the next: 1 s doubling, capped by SECRET_SYNC_BACKOFF_MAX_MS. */
const backoffMs = (deps: AppDeps, attempts: number) =>
  Math.min(1_000 * 2 ** Math.min(Math.max(attempts - 1, 0), 20), deps.env.SECRET_SYNC_BACKOFF_MAX_MS);

const retryable = (failure: Error) =>
  !(failure instanceof SyncSourceError) && !(failure instanceof DestinationError && !failure.retryable);

/** A sync's row locked, if this claim still holds it. */
export const lockClaimed = async (trx: Tx, id: string, claim: Claim) => {
  const locked = await lockSync(trx, id);
  return locked && locked.claim_token === claim.token ? locked : undefined;
};

/** The due time a finished run leaves: a change that came during the run keeps the sync due. */
const dueAfterRun = (locked: { due_at: Date | string | null }, claim: Claim) =>
  locked.due_at && new Date(locked.due_at).getTime() !== claim.until.getTime() ? new Date(locked.due_at) : null;

/** Records a run's outcome, its ownership changes and its audit event, and lets the claim go. */
const finishSync = async (
  deps: AppDeps,
  row: SyncRow,
  claim: Claim,
  result: RunResult | undefined,
  failure: Error | undefined,
  trigger: "auto" | "manual",
  readBack: boolean,
) =>
  inTransaction(deps.db, async (trx) => {
    const locked = await lockClaimed(trx, row.id, claim);
    if (!locked) return;
    const now = new Date(deps.clock.now());
    if (result) {
      await confirmKeys(trx, row.id, result.written, now);
      await releaseKeys(trx, row.id, [...result.deleted, ...result.plan.forget, ...result.conflicts]);
    }
    const message = failure ? errorText(failure) : result ? runMessage(result) : null;
    const attempts = failure ? locked.attempts + 1 : 0;
    const due =
      failure && retryable(failure) ? new Date(now.getTime() + backoffMs(deps, attempts)) : dueAfterRun(locked, claim);
    await updateSync(trx, row.id, {
      sync_status: failure ? "failed" : "succeeded",
      last_sync_message: message,
      last_sync_job_id: claim.token,
      ...(failure
        ? {}
        : {
            last_synced_at: now,
            ...(readBack ? { verify_next: false } : {}),
            ...(result?.plan.referenced ? { referenced_places: JSON.stringify(result.plan.referenced) } : {}),
          }),
      attempts,
      due_at: due,
      claim_token: null,
      claimed_until: null,
    });
    const written = new Set(result?.written.map((w) => w.name));
    await recordPlatformChange(trx, deps, {
      orgId: row.org_id,
      projectId: row.project_id,
      type: "secret-sync-sync-secrets",
      metadata: {
        syncId: row.id,
        destination: row.destination,
        connectionId: row.connection_id,
        folderId: row.folder_id,
        jobId: claim.token,
        jobRanAt: now.toISOString(),
        trigger,
        syncStatus: failure ? "failed" : "succeeded",
        syncMessage: message,
        createdSecretKeys: result?.plan.create.filter((n) => written.has(n)) ?? [],
        updatedSecretKeys: result?.plan.update.filter((n) => written.has(n)) ?? [],
        deletedSecretKeys: result?.deleted ?? [],
        driftedSecretKeys: result?.plan.drifted ?? [],
        skippedSecretKeys: [...(result?.plan.skipped.map((s) => s.key) ?? []), ...(result?.conflicts ?? [])],
      },
    });
  });

export type ImportBehavior = "prioritize-source" | "prioritize-destination";

/**
 * What an import brings into the folder: the destination's secrets within the key schema (its prefix
 * and suffix taken off; a many-to-one secret's JSON keys), missing keys only, or differing values too
 * with `prioritize-destination`. The destination names it read become this sync's: importing is
 * taking them over, and the next run writes the folder's values there.
 */
export const readImport = async (
  prepared: Prepared,
  session: DestinationSession,
  behavior: ImportBehavior,
  deps: AppDeps,
) => {
  const { driver, config, options, folder } = prepared;
  // An import brings the destination's secrets in: it reads every value in the key schema's scope.
  const inScope = (name: string) => matchesKeySchema(options.keySchema, driver.keyOf(config, name), folder.environment);
  const found = await session.list(inScope);
  const values = new Map<string, string>();
  const adopt: string[] = [];
  const schema = options.keySchema?.replaceAll("{{environment}}", folder.environment);
  const [prefix = "", suffix = ""] = schema ? schema.split("{{secretKey}}") : [];
  for (const [name, secret] of found) {
    const key = driver.keyOf(config, name);
    if (secret.value === undefined || !matchesKeySchema(options.keySchema, key, folder.environment)) continue;
    adopt.push(name);
    if (config.mappingBehavior !== "many-to-one") {
      if (secret.value !== "") values.set(key.slice(prefix.length, key.length - suffix.length), secret.value);
      continue;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(secret.value);
    } catch {
      parsed = undefined;
    }
    if (!parsed || typeof parsed !== "object" || Array.isArray(parsed))
      throw new DestinationError(
        "Importing",
        name,
        "invalid format for Many-To-One mapping behavior: requires key/value configuration",
        false,
      );
    for (const [k, v] of Object.entries(parsed as Record<string, unknown>))
      if (typeof v === "string" && v !== "") values.set(k, v);
  }
  const existing = new Set(await existingSecretNames(deps.db, folder.folderId, [...values.keys()]));
  const toWrite = Object.fromEntries(
    [...values].filter(([key]) => behavior === "prioritize-destination" || !existing.has(key)),
  );
  return { toWrite, adopt };
};

/** Writes an import into the folder and takes its names over, in the caller's transaction. */
export const applyImport = async (
  writer: SecretWriter,
  trx: Tx,
  row: SyncRow,
  folderId: string,
  imported: { toWrite: Record<string, string>; adopt: string[] },
) => {
  await writeSystemSecrets(writer, trx, { projectId: row.project_id, folderId }, imported.toWrite);
  await claimKeys(trx, row.id, row.destination_ref, imported.adopt);
};

/** A sync's first run with an import behaviour brings the destination's secrets in first (platform as actor). */
const importFirst = async (deps: AppDeps, row: SyncRow, prepared: Prepared, session: DestinationSession) => {
  const initial = prepared.options.initialSyncBehavior;
  if (row.last_synced_at || !initial || initial === "overwrite-destination") return;
  const behavior = initial === "import-prioritize-destination" ? "prioritize-destination" : "prioritize-source";
  const imported = await readImport(prepared, session, behavior, deps);
  await asPlatformChange(
    deps,
    {
      orgId: row.org_id,
      projectId: row.project_id,
      type: "secret-sync-import-secrets",
      metadata: {
        syncId: row.id,
        destination: row.destination,
        importBehavior: behavior,
        importStatus: "succeeded",
        importedSecretKeys: Object.keys(imported.toWrite),
      },
    },
    (ctx) =>
      inTransaction(ctx, (trx) =>
        applyImport(
          { deps, scope: ctx.scope, actor: { id: row.id, type: "platform" } },
          trx,
          row,
          prepared.folder.folderId,
          imported,
        ),
      ),
  );
};

/**
 * One sync run: claim, folder read, destination listed, plan carried out, outcome recorded with its
 * event (`platform` as actor; `trigger` says whether someone asked for it). Undefined when the sync
 * is gone; SyncBusyError when another run holds it.
 */
export const runSync = async (deps: AppDeps, id: string, trigger: "auto" | "manual") => {
  const claim = await claimSync(deps, id, { column: "sync_status" });
  if (!claim) return undefined;
  const row = await findSync(deps.db, id);
  if (!row) return undefined;
  let result: RunResult | undefined;
  let failure: Error | undefined;
  // A run made due only by changes compares with what it recorded; a first run, a retry, a trigger or
  // a periodic recheck reads the destination's values back (and so finds drift).
  const readBack = row.verify_next || !row.last_synced_at || row.attempts > 0;
  try {
    const prepared = await prepare(deps, row);
    result = await prepared.driver.use(
      deps,
      prepared.connection,
      prepared.config,
      prepared.options,
      async (session) => {
        await importFirst(deps, row, prepared, session);
        return carryOut(deps, row, session, await planFor(deps, row, prepared, session, readBack));
      },
    );
    failure = result.failure;
  } catch (error) {
    failure = error instanceof Error ? error : new Error(String(error));
  }
  if (failure) deps.metrics.jobFailures.inc({ job: "secret-sync" });
  await finishSync(deps, row, claim, result, failure, trigger, readBack);
  return { ok: failure === undefined };
};
