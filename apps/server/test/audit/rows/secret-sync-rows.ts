import type { KeywardClient } from "@keyward/client";
import { expect } from "vitest";
import type { MutatingOperation } from "../../../src/modules/audit/audit-events";
import { expectOk, uniqueName } from "../../helpers/tenant";
import {
  AWS_KEY,
  AZURE,
  GCP_PROJECT,
  PAT,
  createSyncTenant,
  startSyncWorld,
  type SyncTenant,
} from "../../secret-syncs/helpers";
import { auditEventsWhen } from "../helpers";
import { ok, sharedForFile, type Expected, type Step } from "./runner";

type CloudApp = "aws" | "github" | "gcp" | "azureKeyVault";
type SyncOperation = Extract<MutatingOperation, `secretSyncs.${string}` | `appConnections.${CloudApp}.${string}`>;

/** The fakes of AWS and GitHub and the app that reaches them, shared by the file's rows. */
const world = sharedForFile(startSyncWorld);

/**
 * A row on the destinations' app, on a tenant of its own: `setup` prepares, `run` is the operation
 * (inside `act`); the events it wrote are gathered here.
 */
const onWorld =
  (
    run: (t: SyncTenant, fixture: Record<string, string>) => Promise<unknown>,
    expected: (t: SyncTenant, fixture: Record<string, string>) => Pick<Expected, "projectId" | "metadata">,
    setup: (t: SyncTenant) => Promise<Record<string, string>> = async () => ({}),
  ): Step =>
  async ({ act }) => {
    const t = await createSyncTenant(await world(), { ROW_SECRET: "v" });
    const fixture = await setup(t);
    const before = new Set((await auditEventsWhen(t, {}, () => true)).map((event) => event.id));
    await act(() => run(t, fixture));
    const fresh = <E extends { id: string }>(events: E[]) => events.filter((event) => !before.has(event.id));
    const observed = fresh(await auditEventsWhen(t, {}, (events) => fresh(events).length > 0));
    return {
      ...expected(t, fixture),
      orgId: t.orgId,
      actor: { type: "identity", metadata: { identityId: t.adminIdentityId } },
      observed,
    };
  };

type Destination = "awsSecretsManager" | "awsParameterStore" | "github" | "gcpSecretManager" | "azureKeyVault";
const SLUGS = {
  awsSecretsManager: "aws-secrets-manager",
  awsParameterStore: "aws-parameter-store",
  github: "github",
  gcpSecretManager: "gcp-secret-manager",
  azureKeyVault: "azure-key-vault",
};

/** Each destination's connection and where it points. */
const targetOf = async (t: SyncTenant, d: Destination) => {
  if (d === "github")
    return {
      connectionId: t.githubConnectionId,
      destinationConfig: { scope: "repository", owner: "acme", repo: "app" },
    };
  if (d === "gcpSecretManager")
    return { connectionId: t.gcpConnectionId, destinationConfig: { scope: "global", projectId: GCP_PROJECT } };
  if (d === "azureKeyVault")
    return { connectionId: t.azureConnectionId, destinationConfig: { vaultBaseUrl: (await world()).azure.url } };
  return {
    connectionId: t.awsConnectionId,
    destinationConfig:
      d === "awsSecretsManager"
        ? { region: "us-east-1", mappingBehavior: "one-to-one" }
        : { region: "us-east-1", path: `/row-${t.projectId.slice(0, 8)}/` },
  };
};

const routes = (t: SyncTenant, d: Destination) =>
  t.admin.secretSyncs[d] as unknown as KeywardClient["secretSyncs"]["awsSecretsManager"];

const bodyOf = async (t: SyncTenant, d: Destination) => ({
  name: uniqueName("sync"),
  projectId: t.projectId,
  environment: "dev",
  secretPath: "/app",
  isAutoSyncEnabled: false,
  syncOptions: {},
  ...(await targetOf(t, d)),
});

const createSync = async (t: SyncTenant, d: Destination) => ({
  syncId: ok(await routes(t, d).create({ body: (await bodyOf(t, d)) as never })).secretSync.id,
});

const syncRows = (d: Destination): Record<string, Step> => {
  const destination = SLUGS[d];
  const params = (f: Record<string, string>) => ({ params: { syncId: f.syncId! } });
  const onSync = (
    op: string,
    run: (t: SyncTenant, f: Record<string, string>) => Promise<unknown>,
    metadata: (f: Record<string, string>) => Record<string, unknown>,
    projectLevel = true,
  ) => ({
    [`secretSyncs.${d}.${op}`]: onWorld(
      run,
      (t, f) => ({ projectId: projectLevel ? t.projectId : null, metadata: metadata(f) }),
      (t) => createSync(t, d),
    ),
  });
  return {
    [`secretSyncs.${d}.create`]: onWorld(
      async (t) => ok(await routes(t, d).create({ body: (await bodyOf(t, d)) as never })),
      (t) => ({ projectId: t.projectId, metadata: { destination, connectionId: expect.any(String) } }),
    ),
    [`secretSyncs.${d}.planNew`]: onWorld(
      async (t) => ok(await routes(t, d).planNew({ body: (await bodyOf(t, d)) as never })),
      (t) => ({ projectId: t.projectId }),
    ),
    [`secretSyncs.${d}.checkDestination`]: onWorld(
      async (t) =>
        ok(
          await routes(t, d).checkDestination({ body: { projectId: t.projectId, ...(await targetOf(t, d)) } as never }),
        ),
      (t) => ({ projectId: t.projectId }),
    ),
    ...onSync(
      "plan",
      async (t, f) => ok(await routes(t, d).plan(params(f))),
      () => ({}),
    ),
    ...onSync(
      "update",
      async (t, f) => ok(await routes(t, d).update({ ...params(f), body: { description: "changed" } })),
      (f) => ({ syncId: f.syncId, destination, description: "changed" }),
    ),
    ...onSync(
      "delete",
      async (t, f) => ok(await routes(t, d).delete({ ...params(f), query: { removeSecrets: "false" } })),
      (f) => ({ syncId: f.syncId, destination, removeSecrets: false }),
    ),
    ...onSync(
      "syncSecrets",
      async (t, f) => ok(await routes(t, d).syncSecrets(params(f))),
      (f) => ({ syncId: f.syncId, destination, syncStatus: "pending" }),
    ),
    ...onSync(
      "removeSecrets",
      async (t, f) => ok(await routes(t, d).removeSecrets(params(f))),
      (f) => ({ syncId: f.syncId, destination, removeStatus: "succeeded" }),
    ),
    ...(d === "github"
      ? {}
      : onSync(
          "importSecrets",
          async (t, f) =>
            ok(await routes(t, d).importSecrets({ ...params(f), query: { importBehavior: "prioritize-source" } })),
          (f) => ({ syncId: f.syncId, destination, importStatus: "succeeded" }),
        )),
  };
};

/** Each cloud app's sign-in, as a create body carries it. */
const credentialsOf = async (app: CloudApp) => {
  const w = await world();
  if (app === "aws") return { method: "access-key", credentials: AWS_KEY };
  if (app === "gcp")
    return { method: "service-account-key", credentials: { serviceAccountKey: w.gcp.serviceAccountKey } };
  if (app === "azureKeyVault") return { method: "client-secret", credentials: AZURE };
  return { method: "pat", credentials: { personalAccessToken: PAT, instanceType: "server", host: w.githubHost } };
};

const SLUG_OF_APP = { aws: "aws", github: "github", gcp: "gcp", azureKeyVault: "azure-key-vault" };

/** The cloud connections' create, update and delete, on the app that reaches the fakes. */
const connectionRows = (app: CloudApp): Record<string, Step> => {
  const credentials = () => credentialsOf(app);
  const client = (t: SyncTenant) => t.admin.appConnections[app] as unknown as KeywardClient["appConnections"]["aws"];
  const connectionId = (t: SyncTenant) => ({
    connectionId: {
      aws: t.awsConnectionId,
      github: t.githubConnectionId,
      gcp: t.gcpConnectionId,
      azureKeyVault: t.azureConnectionId,
    }[app],
  });
  return {
    [`appConnections.${app}.create`]: onWorld(
      async (t, f) => expectOk(await client(t).create({ body: { name: f.name!, ...(await credentials()) } as never })),
      (_t, f) => ({ projectId: null, metadata: { name: f.name, app: SLUG_OF_APP[app] } }),
      async () => ({ name: uniqueName("conn") }),
    ),
    [`appConnections.${app}.update`]: onWorld(
      async (t) => expectOk(await client(t).update({ params: connectionId(t), body: { description: "x" } })),
      (t) => ({ projectId: null, metadata: { app: SLUG_OF_APP[app], ...connectionId(t), credentialsUpdated: false } }),
    ),
    [`appConnections.${app}.delete`]: onWorld(
      async (t) => expectOk(await client(t).delete({ params: connectionId(t) })),
      (t) => ({ projectId: null, metadata: { app: SLUG_OF_APP[app], ...connectionId(t) } }),
    ),
  };
};

export const SECRET_SYNC_STEPS = {
  ...syncRows("awsSecretsManager"),
  ...syncRows("awsParameterStore"),
  ...syncRows("github"),
  ...syncRows("gcpSecretManager"),
  ...syncRows("azureKeyVault"),
  ...connectionRows("aws"),
  ...connectionRows("github"),
  ...connectionRows("gcp"),
  ...connectionRows("azureKeyVault"),
} as Record<SyncOperation, Step>;
