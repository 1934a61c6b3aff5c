import { randomUUID } from "node:crypto";
import type { SecretRotationType } from "@keyward/contract";
import type { AppDeps, ChangeContext } from "../../context";
import type { Database } from "../../db/database";
import { inTransaction, type Tx } from "../../db/transaction";
import type { RotateAtUtc, SecretRotationsTable } from "../../db/tables/rotation";
import type { Selectable } from "kysely";
import { failpoint } from "../../lib/failpoint";
import { generatePassword, redactSecrets } from "../connectors/credentials";
import { openConnectionById, type UsableConnection } from "../app-connections/app-connection.service";
import { ensureProjectKey, findProjectKey } from "../project-keys/project-key.service";
import { writeSystemSecrets } from "../secrets/secret-system-write";
import { ROTATORS, type Credential, type RotationParameters } from "./rotators";
import { connectionBusy, lockConnectionClaims, lockRotation, updateRotation } from "./rotation.repository";

type Row = Selectable<SecretRotationsTable>;

/** The write-ahead record of a rotation in progress: the passwords being set, and the slot that becomes active. */
export type Intent = { set: { slot: number; password: string }[]; activate: number; manual: boolean };

const credentialsAad = (id: string) => `secret_rotations:${id}:credentials`;
const intentAad = (id: string) => `secret_rotations:${id}:intent`;

export const sealCredentials = async (deps: AppDeps, trx: Tx, projectId: string, id: string, creds: Credential[]) =>
  (await ensureProjectKey(deps, trx, projectId)).seal(JSON.stringify(creds), credentialsAad(id));

export const sealIntent = async (deps: AppDeps, trx: Tx, projectId: string, id: string, intent: Intent) =>
  (await ensureProjectKey(deps, trx, projectId)).seal(JSON.stringify(intent), intentAad(id));

export const openCredentials = async (
  deps: AppDeps,
  row: Pick<Row, "id" | "project_id" | "encrypted_credentials">,
  db: Database = deps.db,
) => {
  const key = await findProjectKey(deps, row.project_id, db);
  return JSON.parse(key!.open(row.encrypted_credentials, credentialsAad(row.id))) as Credential[];
};

const openIntent = async (deps: AppDeps, row: Row, db: Database) => {
  if (!row.encrypted_intent) return undefined;
  const key = await findProjectKey(deps, row.project_id, db);
  return JSON.parse(key!.open(row.encrypted_intent, intentAad(row.id))) as Intent;
};

/** The length of one rotation interval unit: a day, or (tests) ROTATION_INTERVAL_UNIT_S seconds. */
const unitMs = (deps: AppDeps) => deps.env.ROTATION_INTERVAL_UNIT_S * 1_000;

/**
 * When the next rotation is due: `interval` units after `from`; with day units, at `rotateAtUtc` of
 * that day, one day later when that time of day has already passed on the day it was rotated (so a
 * whole interval always passes).
 */
export const nextRotationAt = (deps: AppDeps, from: Date, interval: number, at: RotateAtUtc) => {
  const unit = unitMs(deps);
  if (unit !== 86_400_000) return new Date(from.getTime() + interval * unit);
  const next = new Date(from.getTime());
  next.setUTCDate(next.getUTCDate() + interval);
  next.setUTCHours(at.hours, at.minutes, 0, 0);
  const sameDayAt = new Date(from.getTime());
  sameDayAt.setUTCHours(at.hours, at.minutes, 0, 0);
  if (from.getTime() >= sameDayAt.getTime()) next.setUTCDate(next.getUTCDate() + 1);
  return next;
};

/** A failure's wait before the next attempt: 30 s doubling, at most one interval (and at most a day). */
const retryDelayMs = (deps: AppDeps, attempts: number, interval: number) =>
  Math.min(
    30_000 * 2 ** Math.min(attempts, 16),
    interval * unitMs(deps),
    86_400_000,
    Math.max(1_000, unitMs(deps) * interval),
  );

const requirementsOf = (params: Record<string, unknown>) =>
  params.passwordRequirements as Parameters<typeof generatePassword>[0] | undefined;

/** A rotation another rotation of the same connection (or another instance) is running. */
export class RotationBusyError extends Error {}

type Claim = { row: Row; token: string; intent: Intent };

/**
 * Claims a rotation and makes sure it has an intent: a resumed one keeps the intent it had (the same
 * passwords are set again); a new one gets fresh passwords for the inactive slot. The intent is
 * committed before anything outside changes.
 */
const claim = (deps: AppDeps, id: string, manual: boolean): Promise<Claim | undefined> =>
  inTransaction(deps.db, async (trx) => {
    const locked = await lockRotation(trx, id);
    if (!locked) return undefined;
    await lockConnectionClaims(trx, locked.connection_id);
    const now = new Date(deps.clock.now());
    const claimedUntil = locked.claimed_until ? new Date(locked.claimed_until) : undefined;
    if ((claimedUntil && claimedUntil > now) || (await connectionBusy(trx, locked.connection_id, id, now)))
      throw new RotationBusyError();
    const token = randomUUID();
    let intent = await openIntent(deps, locked, trx);
    if (!intent) {
      const slot = (locked.active_index + 1) % 2;
      intent = {
        set: [{ slot, password: generatePassword(requirementsOf(locked.parameters)) }],
        activate: slot,
        manual,
      };
    }
    await updateRotation(trx, id, {
      claim_token: token,
      claimed_until: new Date(now.getTime() + deps.env.ROTATION_CLAIM_TTL_S * 1_000),
      encrypted_intent: await sealIntent(deps, trx, locked.project_id, id, intent),
      last_rotation_attempted_at: now,
    });
    return { row: locked, token, intent };
  });

export type RotationOutcome = { ok: true } | { ok: false; message: string };

/**
 * Runs one rotation end to end: claim and intent (committed), new passwords set on the outside
 * system and checked by logging in, then one transaction that stores the credentials, writes the
 * mapped secrets (new versions, on the events stream), makes the slot active, clears the intent and
 * records the event. Any failure leaves the intent, so the next attempt sets the same passwords.
 */
export const runRotation = async (
  deps: AppDeps,
  id: string,
  options: {
    manual: boolean;
    /** The context the outcome commits in: a request's (its own event) or a platform change's. */
    change: (
      row: Row,
      outcome: { status: "success" | "failed"; message?: string },
    ) => ChangeContext | Promise<ChangeContext>;
  },
): Promise<RotationOutcome | undefined> => {
  const claimed = await claim(deps, id, options.manual);
  if (!claimed) return undefined;
  const { row, token, intent } = claimed;
  failpoint(deps.env, "rotation-after-intent");
  const rotator = ROTATORS[row.type as SecretRotationType];
  const params = row.parameters as RotationParameters;
  const usernames = rotator.usernames(params);
  const current = await openCredentials(deps, row);
  const next = [...current];
  for (const { slot, password } of intent.set) next[slot] = { username: usernames[slot]!, password };
  const secrets = intent.set.map((s) => s.password);
  let connection: UsableConnection | undefined;
  try {
    connection = await openConnectionById(deps, row.connection_id);
    if (!connection) throw new Error("The rotation's app connection no longer exists");
    // The other slot's credential stays valid (a directory entry keeps it as a second password).
    for (const { slot } of intent.set)
      await rotator.setPassword(deps, connection, params, next[slot]!, next[(slot + 1) % 2]);
    failpoint(deps.env, "rotation-after-password");
    for (const { slot } of intent.set) await rotator.verify(deps, connection, next[slot]!);
  } catch (error) {
    const message = redactSecrets(error instanceof Error ? error.message : String(error), [
      ...secrets,
      ...current.map((c) => c.password),
    ]).slice(0, 1_024);
    deps.metrics.jobFailures.inc({ job: "secret-rotation" });
    await recordFailure(deps, row, token, message, await options.change(row, { status: "failed", message }));
    return { ok: false, message };
  }
  failpoint(deps.env, "rotation-before-secrets");
  const change = await options.change(row, { status: "success" });
  await inTransaction(change, async (trx) => {
    const locked = await lockRotation(trx, id);
    // Claimed again by another instance after ours expired: it finishes the same intent.
    if (!locked || locked.claim_token !== token) return;
    const now = new Date(deps.clock.now());
    const active = next[intent.activate]!;
    await writeSystemSecrets(
      { deps, scope: change.scope, actor: { id: row.id, type: "platform" } },
      trx,
      { projectId: row.project_id, folderId: row.folder_id },
      Object.fromEntries(
        Object.entries(rotator.values(active)).map(([field, value]) => [row.secrets_mapping[field]!, value]),
      ),
    );
    failpoint(deps.env, "rotation-before-active");
    await updateRotation(trx, id, {
      encrypted_credentials: await sealCredentials(deps, trx, row.project_id, id, next),
      encrypted_intent: null,
      active_index: intent.activate,
      rotation_status: "success",
      last_rotation_message: null,
      last_rotated_at: now,
      is_last_rotation_manual: intent.manual,
      next_rotation_at: locked.is_auto_rotation_enabled
        ? nextRotationAt(deps, now, locked.rotation_interval, locked.rotate_at_utc)
        : null,
      attempts: 0,
      claimed_until: null,
      claim_token: null,
    });
  });
  return { ok: true };
};

const recordFailure = (deps: AppDeps, row: Row, token: string, message: string, change: ChangeContext) =>
  inTransaction(change, async (trx) => {
    const locked = await lockRotation(trx, row.id);
    if (!locked || locked.claim_token !== token) return;
    const now = new Date(deps.clock.now());
    const attempts = locked.attempts + 1;
    await updateRotation(trx, row.id, {
      rotation_status: "failed",
      last_rotation_message: message,
      attempts,
      next_rotation_at: new Date(now.getTime() + retryDelayMs(deps, attempts, locked.rotation_interval)),
      claimed_until: null,
      claim_token: null,
    });
  });
