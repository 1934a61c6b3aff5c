import type { Database } from "../../db/database";
import type { Tx } from "../../db/transaction";

/** A session: `family_id` is its own `id` for a sign-in, and the sign-in's for a session started from it. */
export const insertSession = (
  trx: Tx,
  values: {
    id: string;
    family_id: string;
    user_id: string;
    org_id: string;
    auth_method: string;
    ip: string;
    user_agent: string;
    idle_expires_at: Date;
    absolute_expires_at: Date;
  },
) => trx.insertInto("user_sessions").values(values).returning(["id"]).executeTakeFirstOrThrow();

export const insertRefreshToken = (trx: Tx, sessionId: string, tokenHash: Buffer) =>
  trx.insertInto("user_session_refresh_tokens").values({ session_id: sessionId, token_hash: tokenHash }).execute();

/** A refresh token and its session, locked: two refreshes with one token are decided one after the other. */
export const lockRefreshToken = (trx: Tx, tokenHash: Buffer) =>
  trx
    .selectFrom("user_session_refresh_tokens as t")
    .innerJoin("user_sessions as s", "s.id", "t.session_id")
    .innerJoin("users as u", "u.id", "s.user_id")
    .select([
      "t.used_at",
      "u.email",
      "s.id as session_id",
      "s.family_id",
      "s.user_id",
      "s.org_id",
      "s.auth_method",
      "s.revoked_at",
      "s.idle_expires_at",
      "s.absolute_expires_at",
    ])
    .where("t.token_hash", "=", tokenHash)
    .forUpdate()
    .executeTakeFirst();

export const markRefreshTokenUsed = (trx: Tx, tokenHash: Buffer, at: Date) =>
  trx.updateTable("user_session_refresh_tokens").set({ used_at: at }).where("token_hash", "=", tokenHash).execute();

export const extendSession = (trx: Tx, sessionId: string, idleExpiresAt: Date, at: Date) =>
  trx
    .updateTable("user_sessions")
    .set({ idle_expires_at: idleExpiresAt, last_used_at: at, updated_at: at })
    .where("id", "=", sessionId)
    .execute();

export const revokeSessionRow = (trx: Tx | Database, sessionId: string, reason: string, at: Date) =>
  trx
    .updateTable("user_sessions")
    .set({ revoked_at: at, revoke_reason: reason, updated_at: at })
    .where("id", "=", sessionId)
    .where("revoked_at", "is", null)
    .execute();

/** Every live session of a family ends: a spent refresh token of one of them was presented again. */
export const revokeSessionFamily = (trx: Tx, familyId: string, reason: string, at: Date) =>
  trx
    .updateTable("user_sessions")
    .set({ revoked_at: at, revoke_reason: reason, updated_at: at })
    .where("family_id", "=", familyId)
    .where("revoked_at", "is", null)
    .returning("id")
    .execute();

/** Every live session a person holds in one organization ends (sign out everywhere, deactivation). */
export const revokeSessionsOfUserInOrg = (
  trx: Tx | Database,
  userId: string,
  orgId: string,
  reason: string,
  at: Date,
) =>
  trx
    .updateTable("user_sessions")
    .set({ revoked_at: at, revoke_reason: reason, updated_at: at })
    .where("user_id", "=", userId)
    .where("org_id", "=", orgId)
    .where("revoked_at", "is", null)
    .returning("id")
    .execute();

/** What authenticating a session's access token needs: the session, its person and their org membership. */
export const findSessionForAuth = (db: Database, sessionId: string) =>
  db
    .selectFrom("user_sessions as s")
    .innerJoin("users as u", "u.id", "s.user_id")
    .leftJoin("org_user_memberships as om", (join) =>
      join.onRef("om.org_id", "=", "s.org_id").onRef("om.user_id", "=", "s.user_id"),
    )
    .select([
      "s.id",
      "s.user_id",
      "s.org_id",
      "s.auth_method",
      "s.revoked_at",
      "s.idle_expires_at",
      "s.absolute_expires_at",
      "u.email",
      "u.is_active as user_active",
      "om.role as org_role",
      "om.status as membership_status",
      "om.is_active as membership_active",
    ])
    .where("s.id", "=", sessionId)
    .executeTakeFirst();
