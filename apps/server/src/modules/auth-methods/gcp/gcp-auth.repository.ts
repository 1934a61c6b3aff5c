import type { Database } from "../../../db/database";
import { LOGIN_CONFIG_COLUMNS, findMethodRow, insertMethodRow, updateMethodRow } from "../shared/method-repository";

const TABLE = "identity_gcp_auths";
const COLUMNS = ["auth_config_id", "type", "allowed_service_accounts", "allowed_projects", "allowed_zones"] as const;

export type GcpAuthValues = {
  type: string;
  allowed_service_accounts: string;
  allowed_projects: string;
  allowed_zones: string;
};

export const insertGcpAuth = (db: Database, configId: string, values: GcpAuthValues) =>
  insertMethodRow(db, TABLE, { auth_config_id: configId, ...values }, COLUMNS);

export const findGcpAuth = (db: Database, configId: string) => findMethodRow(db, TABLE, COLUMNS, configId);

export type GcpAuthRow = Awaited<ReturnType<typeof findGcpAuth>>;

export const updateGcpAuth = (db: Database, configId: string, values: Partial<GcpAuthValues>) =>
  updateMethodRow(db, TABLE, configId, values, COLUMNS);

export const findGcpLoginConfig = (db: Database, identityId: string) =>
  db
    .selectFrom("identity_auth_configs as c")
    .innerJoin("identity_gcp_auths as g", "g.auth_config_id", "c.id")
    .select([...LOGIN_CONFIG_COLUMNS, "g.type", "g.allowed_service_accounts", "g.allowed_projects", "g.allowed_zones"])
    .where("c.identity_id", "=", identityId)
    .where("c.method", "=", "gcp-auth")
    .executeTakeFirst();
