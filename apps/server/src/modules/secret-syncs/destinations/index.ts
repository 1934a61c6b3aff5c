import type { SecretSyncDestination } from "@keyward/contract";
import { awsParameterStore } from "./aws-parameter-store";
import { awsSecretsManager } from "./aws-secrets-manager";
import { azureKeyVault } from "./azure-key-vault";
import { gcpSecretManager } from "./gcp-secret-manager";
import type { DestinationDriver } from "./destination";
import { gitHub } from "./github";

/** The driver of each destination. */
export const DRIVERS: Record<SecretSyncDestination, DestinationDriver> = {
  "aws-secrets-manager": awsSecretsManager,
  "aws-parameter-store": awsParameterStore,
  github: gitHub,
  "gcp-secret-manager": gcpSecretManager,
  "azure-key-vault": azureKeyVault,
};
