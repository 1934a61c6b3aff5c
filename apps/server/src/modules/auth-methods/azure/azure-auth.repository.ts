import type { Database } from "../../../db/database";
import { LOGIN_CONFIG_COLUMNS, methodTable } from "../shared/method-repository";

export const azureAuthRows = methodTable("identity_azure_auths", [
  "auth_config_id",
  "tenant_id",
  "resource",
  "allowed_service_principal_ids",
] as const);

export const findAzureLoginConfig = (db: Database, identityId: string) =>
  db
    .selectFrom("identity_auth_configs as c")
    .innerJoin("identity_azure_auths as a", "a.auth_config_id", "c.id")
    .select([...LOGIN_CONFIG_COLUMNS, "a.tenant_id", "a.resource", "a.allowed_service_principal_ids"])
    .where("c.identity_id", "=", identityId)
    .where("c.method", "=", "azure-auth")
    .executeTakeFirst();
