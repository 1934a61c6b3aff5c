import type { Database } from "../../../db/database";
import { LOGIN_CONFIG_COLUMNS, methodTable } from "../shared/method-repository";

export const awsAuthRows = methodTable("identity_aws_auths", [
  "auth_config_id",
  "type",
  "sts_endpoint",
  "allowed_principal_arns",
  "allowed_account_ids",
] as const);

export const findAwsLoginConfig = (db: Database, identityId: string) =>
  db
    .selectFrom("identity_auth_configs as c")
    .innerJoin("identity_aws_auths as a", "a.auth_config_id", "c.id")
    .select([...LOGIN_CONFIG_COLUMNS, "a.sts_endpoint", "a.allowed_principal_arns", "a.allowed_account_ids"])
    .where("c.identity_id", "=", identityId)
    .where("c.method", "=", "aws-auth")
    .executeTakeFirst();
