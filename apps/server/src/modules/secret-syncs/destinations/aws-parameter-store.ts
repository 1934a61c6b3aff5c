import type { AppDeps } from "../../../context";
import { awsClientConfig, awsCallerIdentity } from "../../connectors/aws";
import { awsTargetOf } from "../../app-connections/app-clients";
import type { UsableConnection } from "../../app-connections/app-connection.service";
import type { DestinationDriver, DestinationSession, FoundSecret } from "./destination";
import { awsCode, awsFailure, DestinationConflict } from "./errors";

type Config = { region: string; path: string };

/** A parameter name's characters below the path (a key schema may add sub-paths). */
const NAME = /^[a-zA-Z0-9_.\-/]{1,1011}$/;
const PAGE = 10;

const awsOf = (deps: AppDeps, connection: UsableConnection, region: string) => {
  if (connection.app !== "aws") throw new Error("not an AWS connection");
  return awsTargetOf(deps, connection, region);
};

const reachOf = (deps: AppDeps) => ({ outbound: deps.env.ALLOW_PRIVATE_OUTBOUND });

/**
 * AWS Systems Manager Parameter Store: one SecureString parameter per key, named `path` + key. A
 * parameter is created with Overwrite off, so one made by someone else since the listing is never
 * replaced.
 */
export const awsParameterStore: DestinationDriver = {
  nameOf: (raw, key) => {
    const config = raw as Config;
    return NAME.test(key) && !key.startsWith("/") && !key.endsWith("/") && !key.includes("//")
      ? `${config.path}${key}`
      : undefined;
  },
  keyOf: (raw, name) => name.slice((raw as Config).path.length),
  writesEmpty: false,
  readsValues: true,
  shape: (_config, values) => values,
  refOf: async (deps, connection, raw) => {
    const config = raw as Config;
    const { account } = await awsCallerIdentity(reachOf(deps), await awsOf(deps, connection, config.region));
    return `aws:${account}:${config.region}:ssm`;
  },
  use: async (deps, connection, raw, options, work) => {
    const config = raw as Config;
    const sdk = await import("@aws-sdk/client-ssm");
    const client = new sdk.SSMClient(awsClientConfig(reachOf(deps), await awsOf(deps, connection, config.region)));
    const keyId = typeof options.keyId === "string" ? options.keyId : undefined;
    // A key schema with a "/" puts parameters below the path: the whole subtree is listed then.
    const recursive = typeof options.keySchema === "string" && options.keySchema.includes("/");
    const session: DestinationSession = {
      list: async (valueOf) => {
        const found = new Map<string, FoundSecret>();
        let token: string | undefined;
        do {
          const page = await client
            .send(
              new sdk.GetParametersByPathCommand({
                Path: config.path,
                Recursive: recursive,
                WithDecryption: false,
                MaxResults: PAGE,
                ...(token ? { NextToken: token } : {}),
              }),
            )
            .catch((error: unknown) => {
              throw awsFailure("GetParametersByPath", undefined, error);
            });
          for (const p of page.Parameters ?? []) if (p.Name) found.set(p.Name, { name: p.Name, value: undefined });
          token = page.NextToken;
        } while (token);
        const picked = [...found.keys()].filter(valueOf);
        for (let i = 0; i < picked.length; i += PAGE) {
          const answer = await client
            .send(new sdk.GetParametersCommand({ Names: picked.slice(i, i + PAGE), WithDecryption: true }))
            .catch((error: unknown) => {
              throw awsFailure("GetParameters", undefined, error);
            });
          for (const p of answer.Parameters ?? []) if (p.Name) found.set(p.Name, { name: p.Name, value: p.Value });
        }
        return found;
      },
      write: async (name, value, exists) => {
        try {
          await client.send(
            new sdk.PutParameterCommand({
              Name: name,
              Value: value,
              Type: "SecureString",
              Overwrite: exists,
              ...(keyId ? { KeyId: keyId } : {}),
            }),
          );
        } catch (error) {
          if (!exists && awsCode(error) === "ParameterAlreadyExists") throw new DestinationConflict(name);
          throw awsFailure("PutParameter", name, error);
        }
      },
      remove: async (name) => {
        await client.send(new sdk.DeleteParameterCommand({ Name: name })).catch((error: unknown) => {
          if (awsCode(error) === "ParameterNotFound") return;
          throw awsFailure("DeleteParameter", name, error);
        });
      },
    };
    try {
      return await work(session);
    } finally {
      client.destroy();
    }
  },
};
