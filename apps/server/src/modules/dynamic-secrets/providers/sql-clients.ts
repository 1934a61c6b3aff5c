import type { z } from "zod";
import { SUPPORTED_SQL_CLIENTS, type SqlDatabaseInputsSchema } from "@keyward/contract";
import { BadRequestError } from "../../../errors";
import { mysqlProvider, type MysqlInputs } from "./mysql";
import { sqlDatabaseProvider as postgresProvider, type SqlDatabaseInputs as PostgresInputs } from "./sql-database";
import type { Provider } from "./types";
import { onePage } from "./entity-pages";

export type SqlInputs = z.infer<typeof SqlDatabaseInputsSchema>;

/** The reference's SQL clients that Keyward drives; the others answer this 400. */
export const assertSupportedSqlClient = (client: string) => {
  if (!(SUPPORTED_SQL_CLIENTS as readonly string[]).includes(client)) {
    throw new BadRequestError(
      `SQL client '${client}' is not supported. Supported clients: ${SUPPORTED_SQL_CLIENTS.join(", ")}`,
    );
  }
};

const pick = (inputs: SqlInputs): { provider: Provider<unknown>; inputs: unknown } => {
  if (inputs.client === "postgres") return { provider: postgresProvider as Provider<unknown>, inputs };
  if (inputs.client === "mysql2") return { provider: mysqlProvider as Provider<unknown>, inputs };
  assertSupportedSqlClient(inputs.client);
  throw new BadRequestError(`SQL client '${inputs.client}' is not supported`);
};

/** `sql-database` by its `client`: PostgreSQL, or MariaDB/MySQL through mysql2. */
export const sqlClientsProvider: Provider<SqlInputs> = {
  // The stricter of the two (PostgreSQL's 63), so a username template valid for one is valid for both.
  maxUsernameLength: Math.min(postgresProvider.maxUsernameLength, mysqlProvider.maxUsernameLength),
  secretsOf: (inputs) => [(inputs as PostgresInputs | MysqlInputs).password],
  validate: (inputs) => {
    const chosen = pick(inputs);
    chosen.provider.validate(chosen.inputs);
  },
  verifyConnection: (inputs, ctx) => {
    const chosen = pick(inputs);
    return chosen.provider.verifyConnection(chosen.inputs, ctx);
  },
  create: (inputs, lease, ctx) => {
    const chosen = pick(inputs);
    return chosen.provider.create(chosen.inputs, lease, ctx);
  },
  renew: (inputs, username, expireAt, ctx) => {
    const chosen = pick(inputs);
    return chosen.provider.renew(chosen.inputs, username, expireAt, ctx);
  },
  revoke: (inputs, username, ctx) => {
    const chosen = pick(inputs);
    return chosen.provider.revoke(chosen.inputs, username, ctx);
  },
  listEntities: (inputs, marker, ctx) => {
    const chosen = pick(inputs);
    return chosen.provider.listEntities
      ? chosen.provider.listEntities(chosen.inputs, marker, ctx)
      : onePage(async () => []);
  },
  redact: (inputs) => {
    const chosen = pick(inputs);
    return chosen.provider.redact(chosen.inputs);
  },
};
