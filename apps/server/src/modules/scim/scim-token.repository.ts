import type { Database } from "../../db/database";
import type { Tx } from "../../db/transaction";

const TOKEN_COLUMNS = ["id", "org_id", "description", "ttl_days", "expires_at", "created_at", "updated_at"] as const;

export const insertScimToken = (
  trx: Tx,
  values: { orgId: string; tokenHash: Buffer; description: string; ttlDays: number; expiresAt: Date | null },
) =>
  trx
    .insertInto("scim_tokens")
    .values({
      org_id: values.orgId,
      token_hash: values.tokenHash,
      description: values.description,
      ttl_days: values.ttlDays,
      expires_at: values.expiresAt,
    })
    .returning(TOKEN_COLUMNS)
    .executeTakeFirstOrThrow();

export type ScimTokenRow = Awaited<ReturnType<typeof insertScimToken>>;

export const listScimTokensOfOrg = (db: Database, orgId: string) =>
  db
    .selectFrom("scim_tokens")
    .select(TOKEN_COLUMNS)
    .where("org_id", "=", orgId)
    .orderBy("created_at")
    .orderBy("id")
    .execute();

export const findScimToken = (db: Database, tokenId: string) =>
  db.selectFrom("scim_tokens").select(TOKEN_COLUMNS).where("id", "=", tokenId).executeTakeFirst();

export const findScimTokenByHash = (db: Database, tokenHash: Buffer) =>
  db.selectFrom("scim_tokens").select(TOKEN_COLUMNS).where("token_hash", "=", tokenHash).executeTakeFirst();

export const deleteScimTokenRow = (trx: Tx, tokenId: string) =>
  trx.deleteFrom("scim_tokens").where("id", "=", tokenId).execute();
