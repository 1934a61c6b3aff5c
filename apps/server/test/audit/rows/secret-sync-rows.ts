import type { KeywardClient } from "@keyward/client";
import { expect } from "vitest";
import type { MutatingOperation } from "../../../src/modules/audit/audit-events";
import { expectOk, uniqueName } from "../../helpers/tenant";
import { AWS_KEY, PAT, createSyncTenant, startSyncWorld, type SyncTenant } from "../../secret-syncs/helpers";
import { auditEventsWhen } from "../helpers";
import { ok, sharedForFile, type Expected, type Step } from "./runner";

type SyncOperation = Extract<
  MutatingOperation,
  `secretSyncs.${string}` | `appConnections.${"aws" | "github"}.${string}`
>;

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

type Destination = "awsSecretsManager" | "awsParameterStore" | "github";
const SLUGS = { awsSecretsManager: "aws-secrets-manager", awsParameterStore: "aws-parameter-store", github: "github" };

const routes = (t: SyncTenant, d: Destination) =>
  t.admin.secretSyncs[d] as unknown as KeywardClient["secretSyncs"]["awsSecretsManager"];

const bodyOf = (t: SyncTenant, d: Destination) => ({
  name: uniqueName("sync"),
  projectId: t.projectId,
  environment: "dev",
  secretPath: "/app",
  isAutoSyncEnabled: false,
  ...(d === "github"
    ? {
        connectionId: t.githubConnectionId,
        syncOptions: {},
        destinationConfig: { scope: "repository", owner: "acme", repo: "app" },
      }
    : {
        connectionId: t.awsConnectionId,
        syncOptions: {},
        destinationConfig:
          d === "awsSecretsManager"
            ? { region: "us-east-1", mappingBehavior: "one-to-one" }
            : { region: "us-east-1", path: `/row-${t.projectId.slice(0, 8)}/` },
      }),
});

const createSync = async (t: SyncTenant, d: Destination) => ({
  syncId: ok(await routes(t, d).create({ body: bodyOf(t, d) as never })).secretSync.id,
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
      async (t) => ok(await routes(t, d).create({ body: bodyOf(t, d) as never })),
      (t) => ({ projectId: t.projectId, metadata: { destination, connectionId: expect.any(String) } }),
    ),
    [`secretSyncs.${d}.planNew`]: onWorld(
      async (t) => ok(await routes(t, d).planNew({ body: bodyOf(t, d) as never })),
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

/** The AWS and GitHub connections' create, update and delete, on the app that reaches the fakes. */
const connectionRows = (app: "aws" | "github"): Record<string, Step> => {
  const credentials = async () =>
    app === "aws"
      ? { method: "access-key", credentials: AWS_KEY }
      : {
          method: "pat",
          credentials: { personalAccessToken: PAT, instanceType: "server", host: (await world()).githubHost },
        };
  const client = (t: SyncTenant) => t.admin.appConnections[app] as unknown as KeywardClient["appConnections"]["aws"];
  const connectionId = (t: SyncTenant) => ({ connectionId: app === "aws" ? t.awsConnectionId : t.githubConnectionId });
  return {
    [`appConnections.${app}.create`]: onWorld(
      async (t, f) => expectOk(await client(t).create({ body: { name: f.name!, ...(await credentials()) } as never })),
      (_t, f) => ({ projectId: null, metadata: { name: f.name, app } }),
      async () => ({ name: uniqueName("conn") }),
    ),
    [`appConnections.${app}.update`]: onWorld(
      async (t) => expectOk(await client(t).update({ params: connectionId(t), body: { description: "x" } })),
      (t) => ({ projectId: null, metadata: { app, ...connectionId(t), credentialsUpdated: false } }),
    ),
    [`appConnections.${app}.delete`]: onWorld(
      async (t) => expectOk(await client(t).delete({ params: connectionId(t) })),
      (t) => ({ projectId: null, metadata: { app, ...connectionId(t) } }),
    ),
  };
};

export const SECRET_SYNC_STEPS = {
  ...syncRows("awsSecretsManager"),
  ...syncRows("awsParameterStore"),
  ...syncRows("github"),
  ...connectionRows("aws"),
  ...connectionRows("github"),
} as Record<SyncOperation, Step>;
