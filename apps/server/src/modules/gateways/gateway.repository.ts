import type { Tx } from "../../db/transaction";
import { sql } from "kysely";
import type { Database } from "../../db/database";
import type { GatewayAuthMethod } from "../../db/tables/gateways";

/**
 * A gateway as every response shows it, in one query: its AWS config and linked identity's name,
 * whether it has something to revoke, and whether its last heartbeat is still within its TTL
 * (judged by the database clock, so every instance agrees).
 */
const selectGatewayViews = (db: Database) =>
  db
    .selectFrom("gateways as g")
    .leftJoin("gateway_aws_auth_configs as a", "a.gateway_id", "g.id")
    .leftJoin("identities as i", "i.id", "g.identity_id")
    .select([
      "g.id",
      "g.org_id",
      "g.name",
      "g.auth_method",
      "g.identity_id",
      "g.relay_id",
      "g.direct_address",
      "g.token_version",
      "g.heartbeat",
      "g.heartbeat_ttl",
      "g.direct_heartbeat",
      "g.created_at",
      "g.updated_at",
      "i.name as identity_name",
      "a.id as aws_id",
      "a.sts_endpoint as aws_sts_endpoint",
      "a.allowed_principal_arns as aws_allowed_principal_arns",
      "a.allowed_account_ids as aws_allowed_account_ids",
      "a.created_at as aws_created_at",
      "a.updated_at as aws_updated_at",
      sql<boolean>`exists (select 1 from gateway_enrollment_tokens e where e.gateway_id = g.id and e.used_at is null)`.as(
        "has_unused_enrollment_token",
      ),
      sql<boolean>`coalesce(g.heartbeat + g.heartbeat_ttl * interval '1 second' > now(), false)`.as("is_healthy"),
    ]);

export type GatewayViewRow = Awaited<ReturnType<ReturnType<typeof selectGatewayViews>["executeTakeFirstOrThrow"]>>;

export const findGatewayView = (db: Database, orgId: string, gatewayId: string) =>
  selectGatewayViews(db).where("g.id", "=", gatewayId).where("g.org_id", "=", orgId).executeTakeFirst();

export const listGatewayViews = (db: Database, orgId: string) =>
  selectGatewayViews(db).where("g.org_id", "=", orgId).orderBy("g.created_at").orderBy("g.id").execute();

/** The row authorization and business rules need; scoped to an organization. */
export const findGatewayInOrg = (db: Database, orgId: string, gatewayId: string) =>
  db
    .selectFrom("gateways")
    .select(["id", "org_id", "name", "auth_method", "identity_id", "token_version"])
    .where("id", "=", gatewayId)
    .where("org_id", "=", orgId)
    .executeTakeFirst();

export type GatewayRow = NonNullable<Awaited<ReturnType<typeof findGatewayInOrg>>>;

export const findGatewayByIdentity = (db: Database, orgId: string, identityId: string) =>
  db
    .selectFrom("gateways")
    .select(["id", "org_id"])
    .where("identity_id", "=", identityId)
    .where("org_id", "=", orgId)
    .executeTakeFirst();

export const insertGateway = (
  db: Database,
  values: { org_id: string; name: string; auth_method: GatewayAuthMethod; identity_id: string | null },
) => db.insertInto("gateways").values(values).returning("id").executeTakeFirstOrThrow();

export const updateGatewayRow = (
  db: Database,
  gatewayId: string,
  values: { name?: string; auth_method?: GatewayAuthMethod },
) =>
  db
    .updateTable("gateways")
    .set({ ...values, updated_at: new Date() })
    .where("id", "=", gatewayId)
    .execute();

export const deleteGatewayRow = (db: Database, gatewayId: string) =>
  db.deleteFrom("gateways").where("id", "=", gatewayId).execute();

export type AwsConfigValues = { sts_endpoint: string; allowed_principal_arns: string; allowed_account_ids: string };

/** One AWS config per gateway: an edit keeps its id and moves updated_at. */
export const upsertAwsConfig = (db: Database, gatewayId: string, values: AwsConfigValues) =>
  db
    .insertInto("gateway_aws_auth_configs")
    .values({ ...values, gateway_id: gatewayId })
    .onConflict((oc) => oc.column("gateway_id").doUpdateSet({ ...values, updated_at: new Date() }))
    .execute();

export const deleteAwsConfig = (db: Database, gatewayId: string) =>
  db.deleteFrom("gateway_aws_auth_configs").where("gateway_id", "=", gatewayId).execute();

/**
 * Start a new token generation: older access tokens stop authenticating and liveness is cleared
 * until the next heartbeat. With `method`, only while the gateway still uses that auth method.
 */
export const bumpTokenVersion = (db: Database, gatewayId: string, method?: GatewayAuthMethod) => {
  let query = db
    .updateTable("gateways")
    .set({ token_version: sql`token_version + 1`, heartbeat: null, heartbeat_ttl: null })
    .where("id", "=", gatewayId);
  if (method) query = query.where("auth_method", "=", method);
  return query.returning("token_version").executeTakeFirst();
};

/** A heartbeat counts only for the token generation that sent it, so it never revives a revoked gateway. */
export const recordHeartbeat = (db: Database, gatewayId: string, ttl: number, tokenVersion: number | null) => {
  let query = db
    .updateTable("gateways")
    .set({ heartbeat: sql`now()`, heartbeat_ttl: ttl })
    .where("id", "=", gatewayId);
  if (tokenVersion !== null) query = query.where("token_version", "=", tokenVersion);
  return query.executeTakeFirst();
};

/** The current auth method, locked until the transaction ends, so a concurrent switch waits. */
export const lockGatewayAuthMethod = (trx: Tx, gatewayId: string) =>
  trx.selectFrom("gateways").select("auth_method").where("id", "=", gatewayId).forUpdate().executeTakeFirst();

/** Public logins look a gateway up by id alone; they learn only whether it can use a method. */
export const findGatewayAuthMethod = (db: Database, gatewayId: string) =>
  db
    .selectFrom("gateways")
    .select(["id", "auth_method", "name", "org_id"])
    .where("id", "=", gatewayId)
    .executeTakeFirst();
