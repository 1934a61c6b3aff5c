import type { SecretSyncDestination } from "@keyward/contract";
import { awsParameterStore } from "./aws-parameter-store";
import { awsSecretsManager } from "./aws-secrets-manager";
import type { DestinationDriver } from "./destination";
import { gitHub } from "./github";

/** The driver of each destination. */
export const DRIVERS: Record<SecretSyncDestination, DestinationDriver> = {
  "aws-secrets-manager": awsSecretsManager,
  "aws-parameter-store": awsParameterStore,
  github: gitHub,
};
