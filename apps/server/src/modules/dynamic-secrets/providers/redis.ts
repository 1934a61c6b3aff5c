import type { Redis } from "ioredis";
import type { z } from "zod";
import type { RedisInputsSchema } from "@keyward/contract";
import { BadRequestError } from "../../../errors";
import { generateAlphanumericPassword } from "../../connectors/credentials";
import { withRedis } from "../../connectors/redis";
import { tlsOfCa } from "../../connectors/rules";
import { assertTemplate, renderTemplate, splitStatements } from "./templates";
import type { Provider, ProviderContext } from "./types";
import { onePage } from "./entity-pages";

export type RedisInputs = z.infer<typeof RedisInputsSchema>;

/** Redis ACL users never expire by themselves: the revocation job is what ends them. */
export const DEFAULT_REDIS_CREATION = "ACL SETUSER {{username}} on >{{password}} ~* &* +@all";
export const DEFAULT_REDIS_REVOCATION = "ACL DELUSER {{username}}";

const MAX_COMMANDS = 50;

/** One connection per call as the root user (see connectors/redis.ts); `secrets` are passwords being set. */
const withClient = <T>(
  inputs: RedisInputs,
  ctx: ProviderContext,
  work: (client: Redis) => Promise<T>,
  secrets: string[] = [],
) =>
  withRedis(
    { ...ctx, secrets },
    {
      host: inputs.host,
      port: inputs.port,
      username: inputs.username,
      password: inputs.password,
      tls: tlsOfCa(inputs.ca),
    },
    work,
  );

const toCommands = (rendered: string) => {
  const commands = splitStatements(rendered).map((statement) => statement.split(/\s+/).filter((arg) => arg.length > 0));
  if (commands.length > MAX_COMMANDS) throw new BadRequestError(`At most ${MAX_COMMANDS} commands are allowed`);
  return commands;
};

/** All commands in one MULTI/EXEC, so a credential is made whole or not at all. */
const runAtomically = async (client: Redis, commands: string[][]) => {
  const pipeline = client.multi();
  for (const [command, ...args] of commands) pipeline.call(command!, ...args);
  const results = await pipeline.exec();
  if (!results) throw new Error("Redis transaction was aborted");
  const failed = results.find(([error]) => error !== null);
  if (failed) throw failed[0] as Error;
};

const userExists = async (client: Redis, username: string) => (await client.call("ACL", "GETUSER", username)) !== null;

export const redisProvider: Provider<RedisInputs> = {
  maxUsernameLength: 255,
  secretsOf: (inputs) => [inputs.password],
  validate: (inputs) => {
    assertTemplate("Redis creation", inputs.creationStatement, ["username", "password", "expiration"]);
    assertTemplate("Redis renew", inputs.renewStatement, ["username", "expiration"]);
    assertTemplate("Redis revoke", inputs.revocationStatement, ["username"]);
  },
  verifyConnection: async (inputs, ctx) => {
    await withClient(inputs, ctx, (client) => client.ping());
  },
  create: async (inputs, lease, ctx) => {
    const password = generateAlphanumericPassword(64);
    const rendered = renderTemplate(inputs.creationStatement || DEFAULT_REDIS_CREATION, {
      username: lease.username,
      password,
      expiration: lease.expireAt.toISOString(),
    });
    await withClient(inputs, ctx, (client) => runAtomically(client, toCommands(rendered)), [password]);
    return { data: { DB_USERNAME: lease.username, DB_PASSWORD: password }, password };
  },
  renew: async (inputs, username, expireAt, ctx) => {
    if (!inputs.renewStatement) return;
    const rendered = renderTemplate(inputs.renewStatement, { username, expiration: expireAt.toISOString() });
    await withClient(inputs, ctx, (client) => runAtomically(client, toCommands(rendered)));
  },
  revoke: async (inputs, username, ctx) => {
    await withClient(inputs, ctx, async (client) => {
      if (!(await userExists(client, username))) return;
      const rendered = renderTemplate(inputs.revocationStatement || DEFAULT_REDIS_REVOCATION, { username });
      await runAtomically(client, toCommands(rendered));
    });
  },
  listEntities: (inputs, marker, ctx) =>
    onePage(() =>
      withClient(inputs, ctx, async (client) =>
        ((await client.call("ACL", "USERS")) as string[]).filter((name) => name.includes(marker)),
      ),
    ),
  redact: ({ password: _password, ...rest }) => rest,
};
