import type { Database } from "../../db/database";
import { definedOnly } from "./method-inputs";

const COLUMNS = ["auth_config_id", "type", "allowed_service_accounts", "allowed_projects", "allowed_zones"] as const;

export type GcpAuthValues = { type: string; allowed_service_accounts: string; allowed_projects: string; allowed_zones: string };

export const insertGcpAuth = (db: Database, configId: string, values: GcpAuthValues) =>
  db.insertInto("identity_gcp_auths").values({ auth_config_id: configId, ...values }).returning(COLUMNS).executeTakeFirstOrThrow();

export const findGcpAuth = (db: Database, configId: string) =>
  db.selectFrom("identity_gcp_auths").select(COLUMNS).where("auth_config_id", "=", configId).executeTakeFirstOrThrow();

export type GcpAuthRow = Awaited<ReturnType<typeof findGcpAuth>>;

export const updateGcpAuth = (db: Database, configId: string, values: Partial<GcpAuthValues>) => {
  const set = definedOnly(values);
  if (Object.keys(set).length === 0) return findGcpAuth(db, configId);
  return db.updateTable("identity_gcp_auths").set(set).where("auth_config_id", "=", configId).returning(COLUMNS).executeTakeFirstOrThrow();
};
