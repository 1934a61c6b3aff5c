import type { AppDeps } from "../../../context";
import { awsClientConfig, awsCallerIdentity } from "../../connectors/aws";
import { awsTargetOf } from "../../app-connections/app-clients";
import type { UsableConnection } from "../../app-connections/app-connection.service";
import type { DestinationDriver, DestinationSession, FoundSecret } from "./destination";
import { awsCode, awsFailure, DestinationConflict } from "./errors";

type Config = { region: string; mappingBehavior: "one-to-one" | "many-to-one"; secretName?: string };

const NAME = /^[a-zA-Z0-9/_+=.@-]{1,512}$/;
/** Owned secrets deleted by a sync stay recoverable this long (and are restored if written again). */
const RECOVERY_WINDOW_DAYS = 7;
const BATCH_GET = 20;

const awsOf = (deps: AppDeps, connection: UsableConnection, region: string) => {
  if (connection.app !== "aws") throw new Error("not an AWS connection");
  return awsTargetOf(deps, connection, region);
};

const reachOf = (deps: AppDeps) => ({ outbound: deps.env.ALLOW_PRIVATE_OUTBOUND });

/**
 * AWS Secrets Manager: one secret per key (`one-to-one`), or one secret holding every key as a JSON
 * object (`many-to-one`, named by `secretName` through the key schema). Deletes keep a recovery
 * window, and a secret written again while scheduled for deletion is restored first.
 */
export const awsSecretsManager: DestinationDriver = {
  nameOf: (_config, key) => (NAME.test(key) ? key : undefined),
  keyOf: (_config, name) => name,
  writesEmpty: false,
  readsValues: true,
  shape: (raw, values) => {
    const config = raw as Config;
    if (config.mappingBehavior === "one-to-one") return values;
    return new Map([[config.secretName!, JSON.stringify(Object.fromEntries(values))]]);
  },
  refOf: async (deps, connection, raw) => {
    const config = raw as Config;
    const { account } = await awsCallerIdentity(reachOf(deps), await awsOf(deps, connection, config.region));
    return `aws:${account}:${config.region}:secretsmanager`;
  },
  use: async (deps, connection, raw, options, work) => {
    const config = raw as Config;
    const sdk = await import("@aws-sdk/client-secrets-manager");
    const client = new sdk.SecretsManagerClient(
      awsClientConfig(reachOf(deps), await awsOf(deps, connection, config.region)),
    );
    const kmsKeyId = typeof options.keyId === "string" ? options.keyId : undefined;

    const values = async (names: string[]) => {
      const found = new Map<string, FoundSecret>();
      for (let i = 0; i < names.length; i += BATCH_GET) {
        const answer = await client
          .send(new sdk.BatchGetSecretValueCommand({ SecretIdList: names.slice(i, i + BATCH_GET) }))
          .catch((error: unknown) => {
            throw awsFailure("BatchGetSecretValue", undefined, error);
          });
        for (const v of answer.SecretValues ?? [])
          if (v.Name) found.set(v.Name, { name: v.Name, value: v.SecretString ?? undefined });
      }
      return found;
    };

    const list = async (valueOf: (name: string) => boolean) => {
      if (config.mappingBehavior === "many-to-one") {
        const answer = await client
          .send(
            valueOf(config.secretName!)
              ? new sdk.GetSecretValueCommand({ SecretId: config.secretName! })
              : new sdk.DescribeSecretCommand({ SecretId: config.secretName! }),
          )
          .catch((error: unknown) => {
            if (awsCode(error) === "ResourceNotFoundException") return undefined;
            throw awsFailure("GetSecretValue", config.secretName, error);
          });
        return new Map(
          answer
            ? [
                [
                  config.secretName!,
                  { name: config.secretName!, value: "SecretString" in answer ? answer.SecretString : undefined },
                ],
              ]
            : [],
        );
      }
      const names: string[] = [];
      let token: string | undefined;
      do {
        const page = await client
          .send(new sdk.ListSecretsCommand({ MaxResults: 100, ...(token ? { NextToken: token } : {}) }))
          .catch((error: unknown) => {
            throw awsFailure("ListSecrets", undefined, error);
          });
        for (const s of page.SecretList ?? []) if (s.Name && !s.DeletedDate) names.push(s.Name);
        token = page.NextToken;
      } while (token);
      const found = await values(names.filter(valueOf));
      for (const name of names) if (!found.has(name)) found.set(name, { name, value: undefined });
      return found;
    };

    const create = async (name: string, value: string) => {
      try {
        await client.send(
          new sdk.CreateSecretCommand({ Name: name, SecretString: value, ...(kmsKeyId ? { KmsKeyId: kmsKeyId } : {}) }),
        );
      } catch (error) {
        if (awsCode(error) === "ResourceExistsException") throw new DestinationConflict(name);
        // Deleted by this sync earlier and still in its recovery window: restored, then given the value.
        if (awsCode(error) !== "InvalidRequestException") throw awsFailure("CreateSecret", name, error);
        await client.send(new sdk.RestoreSecretCommand({ SecretId: name })).catch((restoreError: unknown) => {
          throw awsFailure("CreateSecret", name, restoreError);
        });
        await update(name, value);
      }
    };

    const update = (name: string, value: string) =>
      client
        .send(
          new sdk.UpdateSecretCommand({
            SecretId: name,
            SecretString: value,
            ...(kmsKeyId ? { KmsKeyId: kmsKeyId } : {}),
          }),
        )
        .then(
          () => undefined,
          (error: unknown) => {
            throw awsFailure("UpdateSecret", name, error);
          },
        );

    const session: DestinationSession = {
      list,
      write: (name, value, exists) => (exists ? update(name, value) : create(name, value)),
      remove: async (name) => {
        await client
          .send(new sdk.DeleteSecretCommand({ SecretId: name, RecoveryWindowInDays: RECOVERY_WINDOW_DAYS }))
          .catch((error: unknown) => {
            if (awsCode(error) === "ResourceNotFoundException") return;
            throw awsFailure("DeleteSecret", name, error);
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
