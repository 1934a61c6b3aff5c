import { randomBytes } from "node:crypto";
import { sql } from "kysely";
import type { Database } from "../../../db/database";

const NONCE_TTL_MS = 60 * 60 * 1000;

/**
 * A fresh Replay-Nonce, stored so any instance accepts it once. Issuing also drops a batch of
 * expired nonces, so the table never grows past what clients hold.
 */
export const issueNonce = async (db: Database, now = new Date()) => {
  const nonce = randomBytes(16).toString("base64url");
  await db
    .insertInto("pki_acme_nonces")
    .values({ nonce, expires_at: new Date(now.getTime() + NONCE_TTL_MS) })
    .execute();
  await db
    .deleteFrom("pki_acme_nonces")
    .where("nonce", "in", db.selectFrom("pki_acme_nonces").select("nonce").where("expires_at", "<", now).limit(100))
    .execute();
  return nonce;
};

/** Use a nonce up: true once, for an unexpired nonce this server issued. */
export const consumeNonce = async (db: Database, nonce: string, now = new Date()) =>
  (await db
    .deleteFrom("pki_acme_nonces")
    .where("nonce", "=", nonce)
    .where("expires_at", ">", sql<Date>`${now.toISOString()}::timestamptz`)
    .returning("nonce")
    .executeTakeFirst()) !== undefined;
