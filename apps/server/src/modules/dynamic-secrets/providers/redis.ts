import type { Redis } from "ioredis";
import type { z } from "zod";
import type { RedisInputsSchema } from "@keyward/contract";
import { BadRequestError } from "../../../errors";
import { resolveProviderHost, withDeadline } from "./outbound";
import { assertTemplate, generatePassword, renderTemplate, splitStatements } from "./templates";
import { PROVIDER_DEADLINE_MS, type Provider, type ProviderContext } from "./types";

export type RedisInputs = z.infer<typeof RedisInputsSchema>;

/** Redis ACL users never expire by themselves: the revocation job is what ends them. */
export const DEFAULT_REDIS_CREATION = "ACL SETUSER {{username}} on >{{password}} ~* &* +@all";
export const DEFAULT_REDIS_REVOCATION = "ACL DELUSER {{username}}";

const MAX_COMMANDS = 50;

const connectAndRun = async <T>(
  inputs: RedisInputs,
  ctx: ProviderContext,
  work: (client: Redis) => Promise<T>,
  track: (client: Redis) => void,
) => {
  const host = await resolveProviderHost(inputs.host, ctx.outbound);
  // Loaded on first use: most instances never lease a Redis user, and the client is large.
  const { Redis } = await import("ioredis");
  const client = new Redis({
    host: host.address,
    port: inputs.port,
    username: inputs.username,
    password: inputs.password || undefined,
    tls: inputs.ca ? { ca: inputs.ca, servername: host.servername } : undefined,
    lazyConnect: true,
    connectTimeout: 5_000,
    commandTimeout: 5_000,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
  });
  client.on("error", () => undefined);
  track(client);
  await client.connect();
  return work(client);
};

/** One connection per call, closed afterwards; the whole call, name resolution included, is bounded. */
const withClient = async <T>(inputs: RedisInputs, ctx: ProviderContext, work: (client: Redis) => Promise<T>) => {
  let client: Redis | undefined;
  let abandoned = false;
  const track = (created: Redis) => {
    client = created;
    if (abandoned) created.disconnect();
  };
  try {
    return await withDeadline(
      PROVIDER_DEADLINE_MS,
      () => {
        abandoned = true;
        client?.disconnect();
      },
      connectAndRun(inputs, ctx, work, track),
    );
  } finally {
    client?.disconnect();
  }
};

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
    const password = generatePassword({ length: 64, required: { lowercase: 1, uppercase: 1, digits: 1, symbols: 0 } });
    const rendered = renderTemplate(inputs.creationStatement || DEFAULT_REDIS_CREATION, {
      username: lease.username,
      password,
      expiration: lease.expireAt.toISOString(),
    });
    await withClient(inputs, ctx, (client) => runAtomically(client, toCommands(rendered)));
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
    withClient(inputs, ctx, async (client) =>
      ((await client.call("ACL", "USERS")) as string[]).filter((name) => name.includes(marker)),
    ),
  redact: ({ password: _password, ...rest }) => rest,
};
