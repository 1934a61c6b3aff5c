import { initServer } from "@ts-rest/express";
import { contract, type SecretSyncDestination } from "@keyward/contract";
import type { AppDeps } from "../../context";
import { contextOf } from "../../http/authenticate";
import { ok } from "../../http/respond";
import {
  deleteSecretSync,
  importSyncedSecrets,
  planNewSecretSync,
  planSecretSync,
  removeSyncedSecrets,
  triggerSecretSync,
} from "./secret-sync.actions";
import {
  checkSecretSyncDestination,
  createSecretSync,
  getSecretSync,
  getSecretSyncByName,
  listSecretSyncs,
  secretSyncOptions,
  updateSecretSync,
} from "./secret-sync.service";

const s = initServer();

/** The same routes for each destination. */
const destinationRouter = (deps: AppDeps, destination: SecretSyncDestination) =>
  s.router(contract.secretSyncs.awsSecretsManager, {
    list: async ({ query, req, res }) =>
      ok(await listSecretSyncs(contextOf(deps, req, res), query.projectId, destination)),
    get: async ({ params, req, res }) => ok(await getSecretSync(contextOf(deps, req, res), destination, params.syncId)),
    getByName: async ({ params, query, req, res }) =>
      ok(await getSecretSyncByName(contextOf(deps, req, res), destination, params.syncName, query.projectId)),
    create: async ({ body, req, res }) =>
      ok(await createSecretSync(contextOf(deps, req, res), destination, body as never)),
    planNew: async ({ body, req, res }) =>
      ok(await planNewSecretSync(contextOf(deps, req, res), destination, body as never)),
    update: async ({ params, body, req, res }) =>
      ok(await updateSecretSync(contextOf(deps, req, res), destination, params.syncId, body as never)),
    delete: async ({ params, query, req, res }) =>
      ok(await deleteSecretSync(contextOf(deps, req, res), destination, params.syncId, query.removeSecrets === "true")),
    syncSecrets: async ({ params, req, res }) =>
      ok(await triggerSecretSync(contextOf(deps, req, res), destination, params.syncId)),
    importSecrets: async ({ params, query, req, res }) =>
      ok(await importSyncedSecrets(contextOf(deps, req, res), destination, params.syncId, query.importBehavior)),
    removeSecrets: async ({ params, req, res }) =>
      ok(await removeSyncedSecrets(contextOf(deps, req, res), destination, params.syncId)),
    checkDestination: async ({ body, req, res }) =>
      ok(await checkSecretSyncDestination(contextOf(deps, req, res), destination, body as never)),
    plan: async ({ params, req, res }) =>
      ok(await planSecretSync(contextOf(deps, req, res), destination, params.syncId)),
  });

export const secretSyncsRouter = (deps: AppDeps) =>
  s.router(contract.secretSyncs, {
    awsSecretsManager: destinationRouter(deps, "aws-secrets-manager"),
    awsParameterStore: destinationRouter(deps, "aws-parameter-store") as never,
    github: (({ importSecrets: _import, ...routes }) => routes)(destinationRouter(deps, "github")) as never,
    gcpSecretManager: destinationRouter(deps, "gcp-secret-manager") as never,
    azureKeyVault: destinationRouter(deps, "azure-key-vault") as never,
    options: async () => ok(secretSyncOptions()),
    listAll: async ({ query, req, res }) => ok(await listSecretSyncs(contextOf(deps, req, res), query.projectId)),
  });
