import type { z } from "zod";
import type { RabbitMqInputsSchema } from "@keyward/contract";
import { BadRequestError } from "../../../errors";
import { generatePassword } from "../../connectors/credentials";
import { withRabbitMq, type RabbitMqApi } from "../../connectors/rabbitmq";
import type { Provider, ProviderContext } from "./types";
import { onePage } from "./entity-pages";

export type RabbitMqInputs = z.infer<typeof RabbitMqInputsSchema>;

const MAX_LISTED_USERS = 10_000;

/** `host` as the reference takes it: `https://mq.example.com`, `http://…`, or a bare name (http). */
const baseUrlOf = (inputs: RabbitMqInputs) => {
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//.test(inputs.host) ? inputs.host : `http://${inputs.host}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw new BadRequestError("Invalid RabbitMQ host");
  }
  if (url.pathname !== "/" || url.search || url.hash)
    throw new BadRequestError("The RabbitMQ host must not have a path");
  url.port = String(inputs.port);
  return url.toString();
};

/** Management API errors carry `{error, reason}`; the reason is what an operator needs. */
const failure = (action: string, status: number, body: string) => {
  let reason = body.slice(0, 200);
  try {
    const parsed = JSON.parse(body) as { reason?: unknown; error?: unknown };
    const given = parsed.reason ?? parsed.error;
    if (typeof given === "string") reason = given;
  } catch {
    // not JSON: keep the text
  }
  return new Error(`RabbitMQ ${action} failed with status ${status}: ${reason}`);
};

type Api = RabbitMqApi;

/** Management API calls as the root user (see connectors/rabbitmq.ts); `secrets` are passwords being set. */
const withApi = <T>(
  inputs: RabbitMqInputs,
  ctx: ProviderContext,
  work: (api: Api) => Promise<T>,
  secrets: string[] = [],
) =>
  withRabbitMq(
    { ...ctx, secrets },
    { url: baseUrlOf(inputs), username: inputs.username, password: inputs.password, ca: inputs.ca },
    work,
  );

const userPath = (username: string) => `users/${encodeURIComponent(username)}`;

const deleteUser = async (api: Api, username: string) => {
  const res = await api("DELETE", userPath(username));
  // 404: already gone, which is what revocation wants.
  if (res.status !== 204 && res.status !== 200 && res.status !== 404)
    throw failure("user deletion", res.status, res.body);
};

/**
 * A user with the configured tags and permissions on one virtual host. Users do not expire in
 * RabbitMQ: the revocation job deletes them at expiry.
 */
export const rabbitMqProvider: Provider<RabbitMqInputs> = {
  maxUsernameLength: 255,
  secretsOf: (inputs) => [inputs.password],
  validate: (inputs) => {
    baseUrlOf(inputs);
  },
  verifyConnection: async (inputs, ctx) => {
    await withApi(inputs, ctx, async (api) => {
      const res = await api("GET", `vhosts/${encodeURIComponent(inputs.virtualHost.name)}`);
      if (res.status === 404) throw new BadRequestError(`Virtual host '${inputs.virtualHost.name}' not found`);
      if (res.status !== 200) throw failure("login", res.status, res.body);
    });
  },
  create: async (inputs, lease, ctx) => {
    const password = generatePassword();
    await withApi(
      inputs,
      ctx,
      async (api) => {
        const user = await api("PUT", userPath(lease.username), { password, tags: inputs.tags.join(",") });
        if (user.status !== 201 && user.status !== 204) throw failure("user creation", user.status, user.body);
        const { read, write, configure } = inputs.virtualHost.permissions;
        const permission = await api(
          "PUT",
          `permissions/${encodeURIComponent(inputs.virtualHost.name)}/${encodeURIComponent(lease.username)}`,
          { configure, write, read },
        );
        if (permission.status !== 201 && permission.status !== 204)
          throw failure("permission grant", permission.status, permission.body);
      },
      [password],
    );
    return { data: { DB_USERNAME: lease.username, DB_PASSWORD: password }, password };
  },
  // Nothing to extend on the broker: the lease row carries the expiry.
  renew: async () => undefined,
  revoke: async (inputs, username, ctx) => {
    await withApi(inputs, ctx, (api) => deleteUser(api, username));
  },
  listEntities: (inputs, marker, ctx) =>
    onePage(() =>
      withApi(inputs, ctx, async (api) => {
        const res = await api("GET", "users?columns=name");
        if (res.status !== 200) throw failure("user listing", res.status, res.body);
        const users = JSON.parse(res.body) as { name: string }[];
        return users
          .slice(0, MAX_LISTED_USERS)
          .map((u) => u.name)
          .filter((name) => name.includes(marker));
      }),
    ),
  redact: ({ password: _password, ...rest }) => rest,
};
