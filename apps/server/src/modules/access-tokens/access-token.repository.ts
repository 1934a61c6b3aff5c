import { sql } from "kysely";
import { batchedLookup } from "../../db/batched-lookup";
import { compiledOnce } from "../../db/compiled-once";
import type { Database } from "../../db/database";
import type { Tx } from "../../db/transaction";

type Executor = Database;

/**
 * The authentication query: tokens by hash, each with its auth method's trusted IPs and its
 * identity. Compiled once, its plan kept; `hash_key` is the hash as base64, the batch's key.
 */
const tokensForAuth = compiledOnce((db, hashes: Buffer[]) =>
  db
    .selectFrom("identity_access_tokens as t")
    .innerJoin("identity_auth_configs as c", "c.id", "t.auth_config_id")
    .innerJoin("identities as i", "i.id", "t.identity_id")
    .select([
      sql<string>`encode(t.token_hash, 'base64')`.as("hash_key"),
      "t.id",
      "t.identity_id",
      "t.auth_method",
      "t.access_token_ttl",
      "t.access_token_num_uses_limit",
      // When its TTL started (epoch ms), and its method's trusted IPs as JSON text: no dates or JSON to parse per row.
      sql<number>`floor(extract(epoch from coalesce(t.last_renewed_at, t.created_at)) * 1000)::float8`.as("issued_at"),
      "t.is_revoked",
      sql<string>`c.access_token_trusted_ips::text`.as("trusted_ips"),
      "i.org_id",
      "i.org_role",
      "i.project_id",
      "i.name",
      sql<boolean>`exists (select 1 from instance_config ic where ic.admin_identity_id = i.id)`.as("is_instance_admin"),
    ])
    .where(sql<boolean>`t.token_hash = any(${hashes}::bytea[])`),
);

const batchedTokenForAuth = batchedLookup(
  (db, keys) =>
    tokensForAuth(
      db,
      keys.map((key) => Buffer.from(key, "base64")),
    ),
  (row) => row.hash_key,
);

/**
 * The token whose SHA-256 hash is `hashKey` (base64, as `tokenHashText` writes it), looked up
 * together with the other tokens asked for in the same event-loop turn: under load, requests that
 * each bring a token not seen within the last second share one round trip instead of one each.
 */
export const findTokenForAuth = (db: Executor, hashKey: string) => batchedTokenForAuth(db, hashKey);

/** Spend one use atomically: N parallel requests never overspend a limit of N. */
export const spendTokenUse = (db: Executor, tokenId: string) =>
  db
    .updateTable("identity_access_tokens")
    .set({ access_token_num_uses: sql`access_token_num_uses + 1` })
    .where("id", "=", tokenId)
    .where("is_revoked", "=", false)
    .where(sql<boolean>`access_token_num_uses < access_token_num_uses_limit`)
    .returning("access_token_num_uses")
    .executeTakeFirst();

/** Many tokens' last-used times in one statement (ids and times pairwise); a token gone meanwhile is skipped. */
export const touchTokensLastUsed = (db: Executor, tokenIds: string[], at: Date[]) =>
  sql`update identity_access_tokens as t set last_used_at = v.at
    from unnest(${tokenIds}::uuid[], ${at.map((d) => d.toISOString())}::timestamptz[]) as v(id, at)
    where t.id = v.id`.execute(db);

export const TOKEN_COLUMNS = [
  "id",
  "identity_id",
  "name",
  "auth_method",
  "access_token_ttl",
  "access_token_max_ttl",
  "access_token_num_uses",
  "access_token_num_uses_limit",
  "access_token_period",
  "last_used_at",
  "last_renewed_at",
  "is_revoked",
  "client_secret_id",
  "created_at",
  "updated_at",
] as const;

export const findTokenByHash = (db: Executor, tokenHash: Buffer) =>
  db.selectFrom("identity_access_tokens").select(TOKEN_COLUMNS).where("token_hash", "=", tokenHash).executeTakeFirst();

export type TokenRow = NonNullable<Awaited<ReturnType<typeof findTokenByHash>>>;

export const insertToken = (
  db: Executor,
  values: {
    identity_id: string;
    auth_config_id: string;
    token_hash: Buffer;
    name: string | null;
    auth_method: string;
    access_token_ttl: number;
    access_token_max_ttl: number;
    access_token_num_uses_limit: number;
    access_token_period: number;
    client_secret_id?: string | null;
  },
) => db.insertInto("identity_access_tokens").values(values).returning(TOKEN_COLUMNS).executeTakeFirstOrThrow();

export const listTokensOfMethod = (
  db: Executor,
  identityId: string,
  method: string,
  page: { offset: number; limit: number },
) =>
  db
    .selectFrom("identity_access_tokens")
    .select(TOKEN_COLUMNS)
    .where("identity_id", "=", identityId)
    .where("auth_method", "=", method)
    .orderBy("updated_at", "desc")
    .orderBy("id")
    .offset(page.offset)
    .limit(page.limit)
    .execute();

/** A token issued by `method` to an identity of the organization. */
export const findTokenOfOrg = (db: Executor, orgId: string, tokenId: string, method: string) =>
  db
    .selectFrom("identity_access_tokens as t")
    .innerJoin("identities as i", "i.id", "t.identity_id")
    .select(["t.id", "t.identity_id"])
    .where("t.id", "=", tokenId)
    .where("i.org_id", "=", orgId)
    .where("t.auth_method", "=", method)
    .executeTakeFirst();

export const renameToken = (db: Executor, tokenId: string, name: string | null) =>
  db
    .updateTable("identity_access_tokens")
    .set({ name, updated_at: new Date() })
    .where("id", "=", tokenId)
    .returning(TOKEN_COLUMNS)
    .executeTakeFirstOrThrow();

/** Revokes a token by id: its hash, or undefined when there is no such token. */
export const markTokenRevoked = (db: Executor, tokenId: string) =>
  db
    .updateTable("identity_access_tokens")
    .set({ is_revoked: true, updated_at: new Date() })
    .where("id", "=", tokenId)
    .returning("token_hash")
    .executeTakeFirst();

/** Revokes a live token by its hash: the token, or undefined when none was live. */
export const revokeTokenByHash = (trx: Tx, tokenHash: Buffer) =>
  trx
    .updateTable("identity_access_tokens")
    .set({ is_revoked: true, updated_at: new Date() })
    .where("token_hash", "=", tokenHash)
    .where("is_revoked", "=", false)
    .returning(["id", "identity_id", "auth_method"])
    .executeTakeFirst();

/** Restarts a token's TTL at `at`. */
export const markTokenRenewed = (trx: Tx, tokenId: string, at: Date) =>
  trx
    .updateTable("identity_access_tokens")
    .set({ last_renewed_at: at, updated_at: at })
    .where("id", "=", tokenId)
    .execute();

/** A token with its identity and organization, for the token's own bearer. */
export const findTokenDetails = (db: Executor, tokenId: string) =>
  db
    .selectFrom("identity_access_tokens as t")
    .innerJoin("identities as i", "i.id", "t.identity_id")
    .innerJoin("organizations as o", "o.id", "i.org_id")
    .select(TOKEN_COLUMNS.map((column) => `t.${column}` as const))
    .select(["i.name as identity_name", "i.project_id as identity_project_id", "o.id as org_id", "o.name as org_name"])
    .select("o.slug as org_slug")
    .where("t.id", "=", tokenId)
    .executeTakeFirst();
