import {
  RedisInputsSchema,
  SqlDatabaseInputsSchema,
  TotpInputsSchema,
  type DynamicSecretProviderType,
} from "@keyward/contract";
import { redisProvider } from "./redis";
import { sqlDatabaseProvider } from "./sql-database";
import { totpProvider } from "./totp";
import type { Provider } from "./types";

export type { Provider, ProviderContext } from "./types";

type Entry = { schema: { parse: (value: unknown) => unknown }; provider: Provider<unknown> };

const entry = <I>(schema: { parse: (value: unknown) => I }, provider: Provider<I>): Entry => ({
  schema,
  provider: provider as Provider<unknown>,
});

const PROVIDERS: Record<DynamicSecretProviderType, Entry> = {
  "sql-database": entry(SqlDatabaseInputsSchema, sqlDatabaseProvider),
  redis: entry(RedisInputsSchema, redisProvider),
  totp: entry(TotpInputsSchema, totpProvider),
};

/** The provider of a stored dynamic secret; an unknown type means a row written by a newer version. */
export const providerOf = (type: string): Entry => {
  const found = PROVIDERS[type as DynamicSecretProviderType];
  if (!found) throw new Error(`Unknown dynamic secret provider ${type}`);
  return found;
};
