import type { Database } from "../../../db/database";
import { LOGIN_CONFIG_COLUMNS, findMethodRow, insertMethodRow, updateMethodRow } from "../shared/method-repository";

const TABLE = "identity_azure_auths";
const COLUMNS = ["auth_config_id", "tenant_id", "resource", "allowed_service_principal_ids"] as const;

export type AzureAuthValues = { tenant_id: string; resource: string; allowed_service_principal_ids: string };

export const insertAzureAuth = (db: Database, configId: string, values: AzureAuthValues) =>
  insertMethodRow(db, TABLE, { auth_config_id: configId, ...values }, COLUMNS);

export const findAzureAuth = (db: Database, configId: string) => findMethodRow(db, TABLE, COLUMNS, configId);

export type AzureAuthRow = Awaited<ReturnType<typeof findAzureAuth>>;

export const updateAzureAuth = (db: Database, configId: string, values: Partial<AzureAuthValues>) =>
  updateMethodRow(db, TABLE, configId, values, COLUMNS);

export const findAzureLoginConfig = (db: Database, identityId: string) =>
  db
    .selectFrom("identity_auth_configs as c")
    .innerJoin("identity_azure_auths as a", "a.auth_config_id", "c.id")
    .select([...LOGIN_CONFIG_COLUMNS, "a.tenant_id", "a.resource", "a.allowed_service_principal_ids"])
    .where("c.identity_id", "=", identityId)
    .where("c.method", "=", "azure-auth")
    .executeTakeFirst();
