import type { Database } from "../../../db/database";
import { LOGIN_CONFIG_COLUMNS, methodTable } from "../shared/method-repository";

export const gcpAuthRows = methodTable("identity_gcp_auths", [
  "auth_config_id",
  "type",
  "allowed_service_accounts",
  "allowed_projects",
  "allowed_zones",
] as const);

export const findGcpLoginConfig = (db: Database, identityId: string) =>
  db
    .selectFrom("identity_auth_configs as c")
    .innerJoin("identity_gcp_auths as g", "g.auth_config_id", "c.id")
    .select([...LOGIN_CONFIG_COLUMNS, "g.type", "g.allowed_service_accounts", "g.allowed_projects", "g.allowed_zones"])
    .where("c.identity_id", "=", identityId)
    .where("c.method", "=", "gcp-auth")
    .executeTakeFirst();
