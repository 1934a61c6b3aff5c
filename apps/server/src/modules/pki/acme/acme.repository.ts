import { sql, type Insertable } from "kysely";
import type { Database } from "../../../db/database";
import type {
  AcmeStatus,
  PkiAcmeAuthorizationsTable,
  PkiAcmeChallengesTable,
  PkiAcmeOrdersTable,
} from "../../../db/tables/pki";

const ACCOUNT_COLUMNS = ["id", "profile_id", "thumbprint", "jwk", "status", "contact", "eab_kid"] as const;

export const findAccountByThumbprint = (db: Database, profileId: string, thumbprint: string) =>
  db
    .selectFrom("pki_acme_accounts")
    .select(ACCOUNT_COLUMNS)
    .where("profile_id", "=", profileId)
    .where("thumbprint", "=", thumbprint)
    .executeTakeFirst();

export const findAccount = (db: Database, profileId: string, accountId: string) =>
  db
    .selectFrom("pki_acme_accounts")
    .select(ACCOUNT_COLUMNS)
    .where("profile_id", "=", profileId)
    .where("id", "=", accountId)
    .executeTakeFirst();

export type AcmeAccountRow = NonNullable<Awaited<ReturnType<typeof findAccount>>>;

export const insertAccount = (
  db: Database,
  values: { profile_id: string; thumbprint: string; jwk: string; contact: string; eab_kid: string | null },
) => db.insertInto("pki_acme_accounts").values(values).returning(ACCOUNT_COLUMNS).executeTakeFirstOrThrow();

export const updateAccount = (
  db: Database,
  accountId: string,
  values: { contact?: string; status?: "valid" | "deactivated"; jwk?: string; thumbprint?: string },
) =>
  db
    .updateTable("pki_acme_accounts")
    .set({ ...values, updated_at: new Date() })
    .where("id", "=", accountId)
    .returning(ACCOUNT_COLUMNS)
    .executeTakeFirstOrThrow();

const ORDER_COLUMNS = ["id", "account_id", "status", "identifiers", "expires_at", "error", "certificate_id"] as const;

export const insertOrder = (db: Database, values: Insertable<PkiAcmeOrdersTable>) =>
  db.insertInto("pki_acme_orders").values(values).returning(ORDER_COLUMNS).executeTakeFirstOrThrow();

export const findOrder = (db: Database, orderId: string) =>
  db.selectFrom("pki_acme_orders").select(ORDER_COLUMNS).where("id", "=", orderId).executeTakeFirst();

export type AcmeOrderRow = NonNullable<Awaited<ReturnType<typeof findOrder>>>;

export const listOrderIdsOfAccount = (db: Database, accountId: string) =>
  db
    .selectFrom("pki_acme_orders")
    .select("id")
    .where("account_id", "=", accountId)
    .orderBy("created_at", "desc")
    .limit(100)
    .execute();

/** Lock an order in one of `statuses`; undefined when it moved on meanwhile. */
export const lockOrder = (db: Database, orderId: string, statuses: AcmeStatus[]) =>
  db
    .selectFrom("pki_acme_orders")
    .select(ORDER_COLUMNS)
    .where("id", "=", orderId)
    .where("status", "in", statuses)
    .forUpdate()
    .executeTakeFirst();

export const setOrderStatus = (
  db: Database,
  orderId: string,
  values: { status: AcmeStatus; certificate_id?: string; error?: string | null },
) =>
  db
    .updateTable("pki_acme_orders")
    .set({ ...values, updated_at: new Date() })
    .where("id", "=", orderId)
    .execute();

/** The order that issued a certificate, to check who may revoke it. */
export const findOrderOfCertificate = (db: Database, certificateId: string) =>
  db.selectFrom("pki_acme_orders").select(ORDER_COLUMNS).where("certificate_id", "=", certificateId).executeTakeFirst();

const AUTHZ_COLUMNS = [
  "id",
  "order_id",
  "identifier_type",
  "identifier_value",
  "wildcard",
  "status",
  "expires_at",
] as const;

export const insertAuthorization = (db: Database, values: Insertable<PkiAcmeAuthorizationsTable>) =>
  db.insertInto("pki_acme_authorizations").values(values).returning(AUTHZ_COLUMNS).executeTakeFirstOrThrow();

export const listAuthorizationsOfOrder = (db: Database, orderId: string) =>
  db
    .selectFrom("pki_acme_authorizations")
    .select(AUTHZ_COLUMNS)
    .where("order_id", "=", orderId)
    .orderBy("created_at")
    .orderBy("id")
    .execute();

/** An authorization with the account of its order. */
export const findAuthorization = (db: Database, authzId: string) =>
  db
    .selectFrom("pki_acme_authorizations as a")
    .innerJoin("pki_acme_orders as o", "o.id", "a.order_id")
    .select([...AUTHZ_COLUMNS.map((c) => `a.${c}` as const), "o.account_id"])
    .where("a.id", "=", authzId)
    .executeTakeFirst();

export type AcmeAuthzRow = Awaited<ReturnType<typeof listAuthorizationsOfOrder>>[number];

export const setAuthorizationStatus = (db: Database, authzId: string, status: AcmeStatus) =>
  db.updateTable("pki_acme_authorizations").set({ status, updated_at: new Date() }).where("id", "=", authzId).execute();

const CHALLENGE_COLUMNS = ["id", "authorization_id", "type", "token", "status", "validated_at", "error"] as const;

export const insertChallenges = (db: Database, values: Insertable<PkiAcmeChallengesTable>[]) =>
  db.insertInto("pki_acme_challenges").values(values).execute();

export const listChallengesOf = (db: Database, authzIds: string[]) =>
  authzIds.length === 0
    ? Promise.resolve([])
    : db
        .selectFrom("pki_acme_challenges")
        .select(CHALLENGE_COLUMNS)
        .where("authorization_id", "in", authzIds)
        .orderBy("type")
        .execute();

export type AcmeChallengeRow = Awaited<ReturnType<typeof listChallengesOf>>[number];

/** A challenge with its authorization and the account of its order. */
export const findChallenge = (db: Database, challengeId: string) =>
  db
    .selectFrom("pki_acme_challenges as c")
    .innerJoin("pki_acme_authorizations as a", "a.id", "c.authorization_id")
    .innerJoin("pki_acme_orders as o", "o.id", "a.order_id")
    .select([
      ...CHALLENGE_COLUMNS.map((col) => `c.${col}` as const),
      "a.identifier_value",
      "a.status as authz_status",
      "a.order_id",
      "o.account_id",
    ])
    .where("c.id", "=", challengeId)
    .executeTakeFirst();

/** Move a challenge from `from` to `to`; false when another request moved it first. */
export const moveChallenge = async (
  db: Database,
  challengeId: string,
  from: AcmeStatus,
  to: AcmeStatus,
  values: { validated_at?: Date; error?: string | null } = {},
) =>
  (await db
    .updateTable("pki_acme_challenges")
    .set({ status: to, ...values, updated_at: new Date() })
    .where("id", "=", challengeId)
    .where("status", "=", from)
    .returning("id")
    .executeTakeFirst()) !== undefined;

/**
 * Take over a validation left in "processing" since before `cutoff` (its instance died mid-way):
 * true when this request now owns it.
 */
export const reclaimStaleChallenge = async (db: Database, challengeId: string, cutoff: Date) =>
  (await db
    .updateTable("pki_acme_challenges")
    .set({ updated_at: new Date() })
    .where("id", "=", challengeId)
    .where("status", "=", "processing")
    .where("updated_at", "<", cutoff)
    .returning("id")
    .executeTakeFirst()) !== undefined;

export const insertNonce = (db: Database, nonce: string, expiresAt: Date) =>
  db.insertInto("pki_acme_nonces").values({ nonce, expires_at: expiresAt }).execute();

/** Drops a batch (at most 100) of nonces expired before `now`. */
export const deleteExpiredNonces = (db: Database, now: Date) =>
  db
    .deleteFrom("pki_acme_nonces")
    .where("nonce", "in", db.selectFrom("pki_acme_nonces").select("nonce").where("expires_at", "<", now).limit(100))
    .execute();

/** Deletes an unexpired nonce: the row when there was one. */
export const deleteLiveNonce = (db: Database, nonce: string, now: Date) =>
  db
    .deleteFrom("pki_acme_nonces")
    .where("nonce", "=", nonce)
    .where("expires_at", ">", sql<Date>`${now.toISOString()}::timestamptz`)
    .returning("nonce")
    .executeTakeFirst();
