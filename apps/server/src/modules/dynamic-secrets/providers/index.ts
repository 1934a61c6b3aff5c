import {
  DYNAMIC_SECRET_PROVIDER_TYPES,
  LdapInputsSchema,
  RabbitMqInputsSchema,
  RedisInputsSchema,
  SqlDatabaseInputsSchema,
  TotpInputsSchema,
  type DynamicSecretProviderType,
} from "@keyward/contract";
import { BadRequestError } from "../../../errors";
import { ldapProvider } from "./ldap";
import { rabbitMqProvider } from "./rabbit-mq";
import { redisProvider } from "./redis";
import { assertSupportedSqlClient, sqlClientsProvider } from "./sql-clients";
import { totpProvider } from "./totp";
import type { Provider } from "./types";

export type { Provider, ProviderContext } from "./types";

type Entry = { schema: { parse: (value: unknown) => unknown }; provider: Provider<unknown> };

const entry = <I>(schema: { parse: (value: unknown) => I }, provider: Provider<I>): Entry => ({
  schema,
  provider: provider as Provider<unknown>,
});

const PROVIDERS: Record<DynamicSecretProviderType, Entry> = {
  "sql-database": entry(SqlDatabaseInputsSchema, sqlClientsProvider),
  redis: entry(RedisInputsSchema, redisProvider),
  "rabbit-mq": entry(RabbitMqInputsSchema, rabbitMqProvider),
  ldap: entry(LdapInputsSchema, ldapProvider),
  totp: entry(TotpInputsSchema, totpProvider),
};

const SUPPORTED_DESCRIPTION = DYNAMIC_SECRET_PROVIDER_TYPES.map((type) =>
  type === "sql-database" ? "sql-database (clients postgres, mysql2)" : type,
).join(", ");

/**
 * The reference's provider types and SQL clients that Keyward does not drive pass the schema and
 * are refused here with a 400 that names what is supported.
 */
export const assertSupportedProvider = (type: string, inputs: unknown) => {
  if (!(DYNAMIC_SECRET_PROVIDER_TYPES as readonly string[]).includes(type)) {
    throw new BadRequestError(
      `Dynamic secret provider '${type}' is not supported. Supported providers: ${SUPPORTED_DESCRIPTION}`,
    );
  }
  if (type === "sql-database") assertSupportedSqlClient(String((inputs as { client?: unknown }).client));
};

/** The provider of a stored dynamic secret; an unknown type means a row written by a newer version. */
export const providerOf = (type: string): Entry => {
  const found = PROVIDERS[type as DynamicSecretProviderType];
  if (!found) throw new Error(`Unknown dynamic secret provider ${type}`);
  return found;
};
