import { sql } from "kysely";
import type { Database } from "../../db/database";

/** Enrolment tokens and gateway access tokens: stored as hashes only, looked up by hash. */

export const insertEnrollmentToken = (
  db: Database,
  values: { gateway_id: string; token_hash: Buffer; ttlSeconds: number },
) =>
  db
    .insertInto("gateway_enrollment_tokens")
    .values({
      gateway_id: values.gateway_id,
      token_hash: values.token_hash,
      expires_at: sql`now() + cast(${values.ttlSeconds} as integer) * interval '1 second'`,
    })
    .returning(["id", "expires_at"])
    .executeTakeFirstOrThrow();

export const deleteUnusedEnrollmentTokens = async (db: Database, gatewayId: string) => {
  const result = await db
    .deleteFrom("gateway_enrollment_tokens")
    .where("gateway_id", "=", gatewayId)
    .where("used_at", "is", null)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
};

/**
 * Spend an enrolment token: one atomic UPDATE, so of any number of concurrent logins with the
 * same token exactly one gets the row back.
 */
export const spendEnrollmentToken = (db: Database, tokenHash: Buffer) =>
  db
    .updateTable("gateway_enrollment_tokens")
    .set({ used_at: sql`now()` })
    .where("token_hash", "=", tokenHash)
    .where("used_at", "is", null)
    .where(sql<boolean>`expires_at > now()`)
    .returning(["id", "gateway_id"])
    .executeTakeFirst();

/** Why a token could not be spent: unknown, already used, or expired. */
export const findEnrollmentTokenState = (db: Database, tokenHash: Buffer) =>
  db
    .selectFrom("gateway_enrollment_tokens")
    .select(["used_at", sql<boolean>`expires_at <= now()`.as("is_expired")])
    .where("token_hash", "=", tokenHash)
    .executeTakeFirst();

export const insertAccessToken = (
  db: Database,
  values: { gateway_id: string; token_hash: Buffer; token_version: number },
) => db.insertInto("gateway_access_tokens").values(values).execute();

export const deleteAccessTokens = async (db: Database, gatewayId: string) => {
  const result = await db.deleteFrom("gateway_access_tokens").where("gateway_id", "=", gatewayId).executeTakeFirst();
  return Number(result.numDeletedRows);
};

/** A token authenticates only while its version is the gateway's current one. */
export const findGatewayByAccessToken = (db: Database, tokenHash: Buffer) =>
  db
    .selectFrom("gateway_access_tokens as t")
    .innerJoin("gateways as g", (join) =>
      join.onRef("g.id", "=", "t.gateway_id").onRef("g.token_version", "=", "t.token_version"),
    )
    .select(["g.id", "g.org_id", "g.token_version"])
    .where("t.token_hash", "=", tokenHash)
    .executeTakeFirst();
