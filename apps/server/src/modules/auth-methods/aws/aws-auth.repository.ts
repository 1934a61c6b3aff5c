import type { Database } from "../../../db/database";
import { LOGIN_CONFIG_COLUMNS, findMethodRow, insertMethodRow, updateMethodRow } from "../shared/method-repository";

const TABLE = "identity_aws_auths";
const COLUMNS = ["auth_config_id", "type", "sts_endpoint", "allowed_principal_arns", "allowed_account_ids"] as const;

export type AwsAuthValues = { sts_endpoint: string; allowed_principal_arns: string; allowed_account_ids: string };

export const insertAwsAuth = (db: Database, configId: string, values: AwsAuthValues) =>
  insertMethodRow(db, TABLE, { auth_config_id: configId, ...values }, COLUMNS);

export const findAwsAuth = (db: Database, configId: string) => findMethodRow(db, TABLE, COLUMNS, configId);

export type AwsAuthRow = Awaited<ReturnType<typeof findAwsAuth>>;

export const updateAwsAuth = (db: Database, configId: string, values: Partial<AwsAuthValues>) =>
  updateMethodRow(db, TABLE, configId, values, COLUMNS);

export const findAwsLoginConfig = (db: Database, identityId: string) =>
  db
    .selectFrom("identity_auth_configs as c")
    .innerJoin("identity_aws_auths as a", "a.auth_config_id", "c.id")
    .select([...LOGIN_CONFIG_COLUMNS, "a.sts_endpoint", "a.allowed_principal_arns", "a.allowed_account_ids"])
    .where("c.identity_id", "=", identityId)
    .where("c.method", "=", "aws-auth")
    .executeTakeFirst();
