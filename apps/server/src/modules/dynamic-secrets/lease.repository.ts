import type { Tx } from "../../db/transaction";
import { sql } from "kysely";
import type { Database } from "../../db/database";
import type { LeaseState } from "../../db/tables/dynamic-secrets";
import { DELETING_STATUS } from "./dynamic-secret.repository";

export const LEASE_COLUMNS = [
  "id",
  "dynamic_secret_id",
  "external_entity_id",
  "expire_at",
  "version",
  "state",
  "status",
  "status_details",
  "config",
  "attempts",
  "created_at",
  "updated_at",
] as const;

/** Failed revocations say so in `status`, as the reference does. */
export const FAILED_DELETION_STATUS = "Failed to delete";

const secondsFromNow = (seconds: number) => sql<Date>`now() + make_interval(secs => ${seconds})`;

export const insertLeaseRow = (db: Database, values: LeaseIntent) =>
  db
    .insertInto("dynamic_secret_leases")
    .values({
      ...values,
      state: "creating",
      config: values.config === undefined ? null : JSON.stringify(values.config),
    })
    .returning(LEASE_COLUMNS)
    .executeTakeFirstOrThrow();

export type LeaseIntent = {
  id: string;
  dynamic_secret_id: string;
  external_entity_id: string;
  expire_at: Date;
  config: unknown;
};

/**
 * The secret's row, locked so parallel creations count its leases one after another; undefined
 * when the secret is gone (or was moved out of every folder).
 */
export const lockDynamicSecretForLeases = (trx: Tx, dynamicSecretId: string) =>
  trx
    .selectFrom("dynamic_secrets")
    .select("status")
    .where("id", "=", dynamicSecretId)
    .where("folder_id", "is not", null)
    .forNoKeyUpdate()
    .executeTakeFirst();

/** Undefined when the lease is no longer `creating` (the sweeper took it): the credential must go. */
export const activateLease = (db: Database, id: string) =>
  db
    .updateTable("dynamic_secret_leases")
    .set({ state: "active", updated_at: sql<Date>`now()` })
    .where("id", "=", id)
    .where("state", "=", "creating")
    .returning(LEASE_COLUMNS)
    .executeTakeFirst();

/** `now`: the instance's clock, which also set every lease's `expire_at`. */
export const findLease = (db: Database, id: string, now: Date) =>
  db
    .selectFrom("dynamic_secret_leases as l")
    .innerJoin("dynamic_secrets as d", "d.id", "l.dynamic_secret_id")
    .select(LEASE_COLUMNS.map((column) => `l.${column}` as const))
    .select(["d.folder_id", sql<boolean>`l.expire_at <= ${now}`.as("is_expired")])
    .where("l.id", "=", id)
    .executeTakeFirst();

export type LeaseRow = Awaited<ReturnType<typeof insertLeaseRow>>;

export const listLeasesOf = (db: Database, dynamicSecretId: string) =>
  db
    .selectFrom("dynamic_secret_leases")
    .select(LEASE_COLUMNS)
    .where("dynamic_secret_id", "=", dynamicSecretId)
    .where("state", "<>", "creating")
    .orderBy("created_at")
    .orderBy("id")
    .execute();

/**
 * One page of a secret's leases in creation order (id breaks ties), served by the
 * (dynamic_secret_id, created_at, id) index.
 */
export const listLeasePageOf = (db: Database, dynamicSecretId: string, page: { offset: number; limit: number }) =>
  db
    .selectFrom("dynamic_secret_leases")
    .select(LEASE_COLUMNS)
    .where("dynamic_secret_id", "=", dynamicSecretId)
    .where("state", "<>", "creating")
    .orderBy("created_at")
    .orderBy("id")
    .offset(page.offset)
    .limit(page.limit)
    .execute();

/** A dynamic secret's leases; `listed`: only those a list shows (not still being created). */
export const countLeasesOf = async (db: Database, dynamicSecretId: string, options: { listed?: boolean } = {}) =>
  Number(
    (
      await db
        .selectFrom("dynamic_secret_leases")
        .select((eb) => eb.fn.countAll<string>().as("count"))
        .where("dynamic_secret_id", "=", dynamicSecretId)
        .$if(options.listed === true, (q) => q.where("state", "<>", "creating"))
        .executeTakeFirstOrThrow()
    ).count,
  );

/**
 * Which of `ids` (UUIDs, as leaseIdFromEntityName makes them) still have a lease row. One parameter,
 * an array literal written here: a target may list more credentials than a statement takes
 * parameters, and the driver's per-element escaping of a 2,000-id array cost the orphan sweep a
 * quarter of its CPU.
 */
export const leaseIdsAmong = async (db: Database, ids: string[]) =>
  ids.length === 0
    ? new Set<string>()
    : new Set(
        (
          await db
            .selectFrom("dynamic_secret_leases")
            .select("id")
            .where(sql<boolean>`id = any(${`{${ids.join(",")}}`}::uuid[])`)
            .execute()
        ).map((r) => r.id),
      );

/**
 * Take one lease for a provider call (revoke or renew). Nobody else touches it until the claim is
 * released or lapses; undefined when someone holds it. Expiry is judged on `onlyUnexpired`, the
 * instance's clock (which set `expire_at`); claims lapse on the database's.
 */
export const claimLease = (
  db: Database,
  id: string,
  token: string,
  claimSeconds: number,
  options: { state?: LeaseState; onlyUnexpired?: Date },
) =>
  db
    .updateTable("dynamic_secret_leases")
    .set({
      claimed_until: secondsFromNow(claimSeconds),
      claim_token: token,
      ...(options.state ? { state: options.state } : {}),
      updated_at: sql<Date>`now()`,
    })
    .where("id", "=", id)
    .where("state", "<>", "creating")
    .where((eb) => eb.or([eb("claimed_until", "is", null), eb("claimed_until", "<", sql<Date>`now()`)]))
    .$if(options.onlyUnexpired !== undefined, (qb) =>
      qb.where("expire_at", ">", options.onlyUnexpired!).where("state", "=", "active"),
    )
    .returning(LEASE_COLUMNS)
    .executeTakeFirst();

/**
 * Ask for a held lease to be revoked: an active lease becomes `revoking`, so no renewal can take it
 * again and the revocation job takes the credential back once the holder lets go. Undefined when
 * the lease is gone or was not active.
 */
export const markForRevocation = (db: Database, id: string) =>
  db
    .updateTable("dynamic_secret_leases")
    .set({ state: "revoking", updated_at: sql<Date>`now()` })
    .where("id", "=", id)
    .where("state", "=", "active")
    .returning(LEASE_COLUMNS)
    .executeTakeFirst();

/**
 * Ids that may be due, each kind read through its own index (expired active leases by expire_at,
 * leases not active through the pending index, leases of secrets being deleted through the
 * secret's), so finding nothing due among many live leases reads no more than the few candidates.
 */
const dueCandidates = (limit: number, creatingGraceSeconds: number, now: Date) => sql`(
  (select a.id from dynamic_secret_leases a
    where a.state = 'active' and a.expire_at <= ${now}
      and (a.claimed_until is null or a.claimed_until < now())
      and a.dynamic_secret_id not in (select p.id from dynamic_secrets p where p.revocation_paused_until > now())
    order by a.expire_at limit ${limit})
  union all
  (select b.id from dynamic_secret_leases b
    where b.state <> 'active'
      and (b.state = 'revoking' or b.created_at < now() - make_interval(secs => ${creatingGraceSeconds}))
      and (b.claimed_until is null or b.claimed_until < now())
      and (b.next_attempt_at is null or b.next_attempt_at <= now())
      and b.dynamic_secret_id not in (select p.id from dynamic_secrets p where p.revocation_paused_until > now())
    order by b.created_at limit ${limit})
  union all
  (select c.id from dynamic_secrets d
    cross join lateral (select id from dynamic_secret_leases
      where dynamic_secret_id = d.id and state = 'active' limit ${limit}) c
    where d.folder_id is null or d.status = ${DELETING_STATUS} limit ${limit}))`;

/**
 * Leases due for revocation: expired, stuck in `creating` past the grace period, already being
 * revoked (a retry, or a claimer that died), or belonging to a secret being deleted. Locked with
 * FOR UPDATE SKIP LOCKED, so every instance can run this at once and no two take the same row; the
 * conditions are checked again on the locked row, as another instance may have claimed it since.
 * Expiry is judged on `now`, the instance's clock (which set `expire_at`); claims, the creating grace
 * and backoffs, written by the database's clock, on the database's.
 */
export const lockDueLeases = (trx: Tx, limit: number, creatingGraceSeconds: number, now: Date) =>
  trx
    .selectFrom("dynamic_secret_leases as l")
    .select("l.id")
    // Enough candidates that another instance's locked rows can be skipped past.
    .where(sql<boolean>`l.id in ${dueCandidates(limit * 4, creatingGraceSeconds, now)}`)
    .where((eb) => eb.or([eb("l.claimed_until", "is", null), eb("l.claimed_until", "<", sql<Date>`now()`)]))
    .where((eb) => eb.or([eb("l.next_attempt_at", "is", null), eb("l.next_attempt_at", "<=", sql<Date>`now()`)]))
    // A secret whose target keeps refusing waits out its backoff as a whole.
    .where((eb) =>
      eb(
        "l.dynamic_secret_id",
        "not in",
        eb
          .selectFrom("dynamic_secrets as p")
          .select("p.id")
          .where("p.revocation_paused_until", ">", sql<Date>`now()`),
      ),
    )
    .where((eb) =>
      eb.or([
        eb.and([eb("l.state", "=", "active"), eb("l.expire_at", "<=", now)]),
        eb.and([
          eb("l.state", "=", "creating"),
          eb("l.created_at", "<", sql<Date>`now() - make_interval(secs => ${creatingGraceSeconds})`),
        ]),
        eb("l.state", "=", "revoking"),
        eb.and([
          eb("l.state", "=", "active"),
          eb(
            "l.dynamic_secret_id",
            "in",
            eb
              .selectFrom("dynamic_secrets as d")
              .select("d.id")
              .where((inner) => inner.or([inner("d.folder_id", "is", null), inner("d.status", "=", DELETING_STATUS)])),
          ),
        ]),
      ]),
    )
    .orderBy("l.expire_at")
    .limit(limit)
    .forUpdate()
    .skipLocked()
    .execute();

/** Mark locked leases as claimed by `token` for the duration of the provider calls. */
export const claimLockedLeases = (trx: Database, ids: string[], token: string, claimSeconds: number) =>
  trx
    .updateTable("dynamic_secret_leases")
    .set({
      state: "revoking",
      claimed_until: secondsFromNow(claimSeconds),
      claim_token: token,
      attempts: sql<number>`attempts + 1`,
      updated_at: sql<Date>`now()`,
    })
    .where("id", "in", ids)
    .returning(LEASE_COLUMNS)
    .execute();

/**
 * Hand claimed leases back untried (their secret was paused meanwhile): they stay due, and the
 * attempt counted when they were claimed is taken back.
 */
export const releaseUntriedClaims = (db: Database, ids: string[], token: string) =>
  ids.length === 0
    ? Promise.resolve([])
    : db
        .updateTable("dynamic_secret_leases")
        .set({
          claimed_until: null,
          claim_token: null,
          attempts: sql<number>`greatest(attempts - 1, 0)`,
          updated_at: sql<Date>`now()`,
        })
        .where("id", "in", ids)
        .where("claim_token", "=", token)
        .execute();

/** The credentials are gone: drop the rows, but only those this caller still holds the claim on. */
export const deleteClaimedLeases = (db: Database, ids: string[], token: string) =>
  db
    .deleteFrom("dynamic_secret_leases")
    .where("id", "in", ids)
    .where("claim_token", "=", token)
    .returning(LEASE_COLUMNS)
    .execute();

/** A failed revocation: visible in status, retried after `retrySeconds` by whichever instance comes first. */
export const recordFailedRevocation = (
  db: Database,
  id: string,
  token: string,
  details: string,
  retrySeconds: number,
) =>
  db
    .updateTable("dynamic_secret_leases")
    .set({
      state: "revoking",
      status: FAILED_DELETION_STATUS,
      status_details: details.slice(0, 255),
      next_attempt_at: secondsFromNow(retrySeconds),
      claimed_until: null,
      claim_token: null,
      updated_at: sql<Date>`now()`,
    })
    .where("id", "=", id)
    .where("claim_token", "=", token)
    .returning(LEASE_COLUMNS)
    .executeTakeFirst();

/** Release a renewal claim, with the new expiry when the provider accepted it. */
export const releaseRenewal = (db: Database, id: string, token: string, expireAt?: Date) =>
  db
    .updateTable("dynamic_secret_leases")
    .set({
      claimed_until: null,
      claim_token: null,
      ...(expireAt ? { expire_at: expireAt } : {}),
      updated_at: sql<Date>`now()`,
    })
    .where("id", "=", id)
    .where("claim_token", "=", token)
    .returning(LEASE_COLUMNS)
    .executeTakeFirst();

/** A lease whose provider call failed before it was ever handed out: retried as a revocation at once. */
export const markCreationFailed = (db: Database, id: string, details: string) =>
  db
    .updateTable("dynamic_secret_leases")
    .set({
      state: "revoking",
      status: FAILED_DELETION_STATUS,
      status_details: details.slice(0, 255),
      updated_at: sql<Date>`now()`,
    })
    .where("id", "=", id)
    .execute();

export const deleteLeaseById = (db: Database, id: string) =>
  db.deleteFrom("dynamic_secret_leases").where("id", "=", id).execute();

/** The project and organization a dynamic secret belongs to (none once it is detached from its folder). */
export const findDynamicSecretOwner = (db: Database, dynamicSecretId: string) =>
  db
    .selectFrom("dynamic_secrets as d")
    .innerJoin("secret_folders as f", "f.id", "d.folder_id")
    .innerJoin("environments as e", "e.id", "f.env_id")
    .innerJoin("projects as p", "p.id", "e.project_id")
    .select(["p.id as projectId", "p.org_id as orgId", "d.name", "e.slug as environment"])
    .where("d.id", "=", dynamicSecretId)
    .executeTakeFirst();
