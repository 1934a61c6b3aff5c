import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app";
import { createProject, createTenant, expectOk, uniqueName, type Tenant } from "../helpers/tenant";
import { startAwsFake, type AwsFake } from "../services/aws-destinations";
import { startAzureFake, type AzureFake } from "../services/azure-destination";
import { startGcpFake, type GcpFake } from "../services/gcp-destination";
import { startGitHubFake, type GitHubFake } from "../services/github-destination";
import { createTestCa } from "../services/workload-peers";

export const REGION = "us-east-1";
export const ACCOUNT = "111122223333";
export const AWS_KEY = { accessKeyId: "AKIAKEYWARDSYNC", secretAccessKey: "kw-sync-secret-access-key/abc" };
export const PAT = "ghp_keywardSyncToken0123456789";
/** The instance's own AWS key, with which assume-role connections assume their organization's role. */
export const INSTANCE_AWS_KEY = { accessKeyId: "AKIAKEYWARDINSTANCE", secretAccessKey: "kw-instance-secret/key" };
export const GCP_PROJECT = "keyward-sync-test";
export const AZURE = {
  tenantId: "3f2504e0-4f89-11d3-9a0c-0305e82c3301",
  clientId: "6ba7b810-9dad-11d1-80b4-00c04fd430c8",
  clientSecret: "kw-azure-client-secret~value",
};

export type SyncWorld = {
  app: TestApp;
  aws: AwsFake;
  github: GitHubFake;
  gcp: GcpFake;
  azure: AzureFake;
  /** host:port of the GitHub Enterprise Server fake. */
  githubHost: string;
  close: () => Promise<void>;
};

/**
 * The destinations' fakes over HTTPS with a CA of the test's own, and an app that trusts that CA
 * through OUTBOUND_EXTRA_CA_FILE only. The AWS SDK finds the fake through the standard
 * AWS_ENDPOINT_URL_<SERVICE> variables, as a user's private endpoint would be found.
 */
export const startSyncWorld = async (): Promise<SyncWorld> => startSyncWorldWith();

/** The same, with settings of the app's own (a database shared with a second instance). */
export const startSyncWorldWith = async (
  overrides: Record<string, string> = {},
): Promise<SyncWorld & { caFile: string }> => {
  const ca = await createTestCa();
  const dir = mkdtempSync(join(tmpdir(), "keyward-sync-ca-"));
  const caFile = join(dir, "ca.pem");
  writeFileSync(caFile, ca.caPem);
  const [aws, github, gcp, azure] = await Promise.all([
    startAwsFake(ca, {
      region: REGION,
      callers: {
        [AWS_KEY.accessKeyId]: {
          secretAccessKey: AWS_KEY.secretAccessKey,
          account: ACCOUNT,
          arn: `arn:aws:iam::${ACCOUNT}:user/keyward`,
          userId: "AIDAKEYWARD",
        },
        [INSTANCE_AWS_KEY.accessKeyId]: {
          secretAccessKey: INSTANCE_AWS_KEY.secretAccessKey,
          account: "999988887777",
          arn: "arn:aws:iam::999988887777:user/keyward-instance",
          userId: "AIDAKEYWARDINSTANCE",
        },
      },
    }),
    startGitHubFake(ca, { token: PAT, repositories: [{ owner: "acme", repo: "app", environments: ["prod"] }] }),
    startGcpFake(ca, { projectId: GCP_PROJECT }),
    startAzureFake(ca, AZURE),
  ]);
  for (const service of ["SECRETS_MANAGER", "SSM", "STS"]) process.env[`AWS_ENDPOINT_URL_${service}`] = aws.url;
  const app = await startTestApp({
    OUTBOUND_EXTRA_CA_FILE: caFile,
    SECRET_SYNC_DEBOUNCE_MS: "50",
    GCP_OAUTH2_TOKEN_URL: `${gcp.url}/token`,
    GCP_SECRET_MANAGER_BASE_URL: gcp.url,
    AZURE_LOGIN_BASE_URL: azure.url,
    APP_CONNECTION_AWS_ACCESS_KEY_ID: INSTANCE_AWS_KEY.accessKeyId,
    APP_CONNECTION_AWS_SECRET_ACCESS_KEY: INSTANCE_AWS_KEY.secretAccessKey,
    ...overrides,
  });
  return {
    app,
    caFile,
    aws,
    github,
    gcp,
    azure,
    githubHost: new URL(github.url).host,
    close: async () => {
      await Promise.all([app.close(), aws.close(), github.close(), gcp.close(), azure.close()]);
    },
  };
};

export type SyncTenant = Tenant & {
  projectId: string;
  awsConnectionId: string;
  githubConnectionId: string;
  gcpConnectionId: string;
  azureConnectionId: string;
};

/** A tenant with a project, a folder `/app` in dev with secrets, and an AWS and a GitHub connection. */
export const createSyncTenant = async (world: SyncWorld, secrets: Record<string, string>): Promise<SyncTenant> => {
  const tenant = await createTenant(world.app);
  const project = await createProject(tenant);
  expectOk(
    await tenant.admin.folders.create({
      body: { projectId: project.id, environment: "dev", name: "app", path: "/" },
    }),
  );
  for (const [secretName, secretValue] of Object.entries(secrets))
    expectOk(
      await tenant.admin.secretsV3.create({
        params: { secretName },
        body: { workspaceId: project.id, environment: "dev", secretPath: "/app", secretValue },
      }),
    );
  const aws = expectOk(
    await tenant.admin.appConnections.aws.create({
      body: { name: uniqueName("aws"), method: "access-key", credentials: AWS_KEY },
    }),
  ).appConnection;
  const github = expectOk(
    await tenant.admin.appConnections.github.create({
      body: {
        name: uniqueName("gh"),
        method: "pat",
        credentials: { personalAccessToken: PAT, instanceType: "server", host: world.githubHost },
      },
    }),
  ).appConnection;
  const gcp = expectOk(
    await tenant.admin.appConnections.gcp.create({
      body: {
        name: uniqueName("gcp"),
        method: "service-account-key",
        credentials: { serviceAccountKey: JSON.stringify(world.gcp.serviceAccountKey) },
      } as never,
    }),
  ).appConnection;
  const azure = expectOk(
    await tenant.admin.appConnections.azureKeyVault.create({
      body: { name: uniqueName("akv"), method: "client-secret", credentials: AZURE },
    }),
  ).appConnection;
  return {
    ...tenant,
    projectId: project.id,
    awsConnectionId: aws.id,
    githubConnectionId: github.id,
    gcpConnectionId: gcp.id,
    azureConnectionId: azure.id,
  };
};

/** The world for a test file: started before its first test, closed after its last. */
export const useSyncWorld = () => {
  let world: SyncWorld | undefined;
  beforeAll(async () => {
    world = await startSyncWorld();
  });
  afterAll(async () => {
    await world?.close();
  });
  return () => world!;
};

/** A new sync's source: the tenant's `/app` folder in dev, through `connectionId`. */
export const syncSource = (t: SyncTenant, connectionId: string) => ({
  name: uniqueName("sync"),
  projectId: t.projectId,
  connectionId,
  environment: "dev",
  secretPath: "/app",
  syncOptions: {},
});

export const setSecret = async (t: SyncTenant, secretName: string, secretValue: string) =>
  expectOk(
    await t.admin.secretsV3.update({
      params: { secretName },
      body: { workspaceId: t.projectId, environment: "dev", secretPath: "/app", secretValue },
    }),
  );

export const deleteSecret = async (t: SyncTenant, secretName: string) =>
  expectOk(
    await t.admin.secretsV3.delete({
      params: { secretName },
      body: { workspaceId: t.projectId, environment: "dev", secretPath: "/app" },
    }),
  );

/** Runs `work` with the app's injected clock `ms` ahead (a retry's backoff or a recheck's age passed). */
export const later = async <T>(app: TestApp, ms: number, work: () => Promise<T>) => {
  const clock = app.deps.clock;
  const now = clock.now;
  clock.now = () => Date.now() + ms;
  try {
    return await work();
  } finally {
    clock.now = now;
  }
};

/** An AWS Secrets Manager sync (one secret per key, us-east-1) of the tenant's `/app`, auto-sync on. */
export const smSync = async (t: SyncTenant, extra: Record<string, unknown> = {}) =>
  expectOk(
    await t.admin.secretSyncs.awsSecretsManager.create({
      body: {
        ...syncSource(t, t.awsConnectionId),
        syncOptions: { initialSyncBehavior: "overwrite-destination", ...extra },
        destinationConfig: { region: "us-east-1", mappingBehavior: "one-to-one" },
      } as never,
    }),
  ).secretSync;
