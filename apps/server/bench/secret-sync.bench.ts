import { randomBytes } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AddressInfo } from "node:net";
import { createKeywardClient, type KeywardClient } from "@keyward/client";
import { createApp } from "../src/app/create-app";
import { buildDeps } from "../src/app/deps";
import { startJobs } from "../src/app/jobs";
import { createHttpServer } from "../src/app/server";
import { loadEnv } from "../src/env";
import { startAwsFake } from "../test/services/aws-destinations";
import { startAzureFake } from "../test/services/azure-destination";
import { startGcpFake } from "../test/services/gcp-destination";
import { startGitHubFake } from "../test/services/github-destination";
import { createTestCa } from "../test/services/workload-peers";
import { setupOk } from "./lib/endpoint";
import { startPostgres } from "./lib/processes";

/**
 * Secret syncs against local stand-ins of each destination (HTTPS with a CA of the bench's own,
 * signatures and sealed boxes checked), Keyward on PostgreSQL in this process with its sync job
 * running: for each destination, the first sync of a folder of BENCH_SYNC_SECRETS secrets (1,000)
 * from the create call until the last one is at the destination, then one change's delivery, from
 * the write's answer until the destination holds the new value (the median of BENCH_SYNC_CHANGES, 5).
 */
const SECRETS = Number(process.env.BENCH_SYNC_SECRETS ?? 1_000);
const CHANGES = Number(process.env.BENCH_SYNC_CHANGES ?? 5);
const KEY = { accessKeyId: "AKIABENCH", secretAccessKey: "bench-secret-access-key" };
const PAT = "ghp_bench";
const AZURE = {
  tenantId: "3f2504e0-4f89-11d3-9a0c-0305e82c3301",
  clientId: "6ba7b810-9dad-11d1-80b4-00c04fd430c8",
  clientSecret: "bench-client-secret",
};
const GCP_PROJECT = "keyward-bench";

const ca = await createTestCa();
const caFile = join(mkdtempSync(join(tmpdir(), "keyward-bench-ca-")), "ca.pem");
writeFileSync(caFile, ca.caPem);
const [aws, github, gcp, azure] = await Promise.all([
  startAwsFake(ca, {
    callers: {
      [KEY.accessKeyId]: {
        secretAccessKey: KEY.secretAccessKey,
        account: "111122223333",
        arn: "arn:aws:iam::111122223333:user/bench",
        userId: "AIDABENCH",
      },
    },
  }),
  startGitHubFake(ca, { token: PAT, repositories: [{ owner: "acme", repo: "app" }], orgs: ["acme"] }),
  startGcpFake(ca, { projectId: GCP_PROJECT }),
  startAzureFake(ca, AZURE),
]);
for (const service of ["SECRETS_MANAGER", "SSM", "STS"]) process.env[`AWS_ENDPOINT_URL_${service}`] = aws.url;

const storage = await startPostgres();
const env = loadEnv({
  DATABASE_URL: storage.url,
  DATA_DIR: mkdtempSync(join(tmpdir(), "keyward-bench-")),
  ENCRYPTION_KEY: randomBytes(32).toString("base64"),
  ALLOW_PRIVATE_OUTBOUND: "loopback",
  OUTBOUND_EXTRA_CA_FILE: caFile,
  GCP_OAUTH2_TOKEN_URL: `${gcp.url}/token`,
  GCP_SECRET_MANAGER_BASE_URL: gcp.url,
  AZURE_LOGIN_BASE_URL: azure.url,
  LOG_LEVEL: "warn",
});
const { deps, handle } = await buildDeps(env, { dataDir: "memory://" });
const server = createHttpServer(createApp(deps), env);
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
const stopJobs = startJobs(deps, ["secret-sync", "events"]);
const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

/** Polls until `done` (every 5 ms): the milliseconds it took from `started`. */
const until = async (started: number, done: () => boolean, what: string) => {
  while (!done()) {
    if (performance.now() - started > 600_000) throw new Error(`${what}: not done within 10 minutes`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return performance.now() - started;
};

type Case = {
  label: string;
  connection: (admin: KeywardClient) => Promise<string>;
  routes: (admin: KeywardClient) => KeywardClient["secretSyncs"]["awsSecretsManager"];
  destinationConfig: Record<string, unknown>;
  /** The value the destination holds for folder key `key`. */
  valueOf: (key: string) => string | undefined;
  count: () => number;
};

const connected = async (admin: KeywardClient, app: "aws" | "github" | "gcp" | "azureKeyVault", body: unknown) =>
  setupOk(await (admin.appConnections[app] as KeywardClient["appConnections"]["aws"]).create({ body: body as never }))
    .appConnection.id;

const CASES: Case[] = [
  {
    label: "AWS Secrets Manager",
    connection: (a) => connected(a, "aws", { name: "aws-sm", method: "access-key", credentials: KEY }),
    routes: (a) => a.secretSyncs.awsSecretsManager,
    destinationConfig: { region: "us-east-1", mappingBehavior: "one-to-one" },
    valueOf: (key) => aws.secrets.get(key)?.value,
    count: () => aws.secrets.size,
  },
  {
    label: "AWS Parameter Store",
    connection: (a) => connected(a, "aws", { name: "aws-ps", method: "access-key", credentials: KEY }),
    routes: (a) => a.secretSyncs.awsParameterStore,
    destinationConfig: { region: "us-east-1", path: "/bench/" },
    valueOf: (key) => aws.parameters.get(`/bench/${key}`)?.value,
    count: () => aws.parameters.size,
  },
  {
    label: "GitHub (organization)",
    connection: (a) =>
      connected(a, "github", {
        name: "gh",
        method: "pat",
        credentials: { personalAccessToken: PAT, instanceType: "server", host: new URL(github.url).host },
      }),
    routes: (a) => a.secretSyncs.github as never,
    destinationConfig: { scope: "organization", org: "acme", visibility: "all" },
    valueOf: (key) => github.orgSecrets("acme").get(key.toUpperCase())?.value,
    count: () => github.orgSecrets("acme").size,
  },
  {
    label: "GCP Secret Manager",
    connection: (a) =>
      connected(a, "gcp", {
        name: "gcp",
        method: "service-account-key",
        credentials: { serviceAccountKey: gcp.serviceAccountKey },
      }),
    routes: (a) => a.secretSyncs.gcpSecretManager,
    destinationConfig: { scope: "global", projectId: GCP_PROJECT },
    valueOf: (key) => gcp.latest(key),
    count: () => gcp.secrets.size,
  },
  {
    label: "Azure Key Vault",
    connection: (a) => connected(a, "azureKeyVault", { name: "akv", method: "client-secret", credentials: AZURE }),
    routes: (a) => a.secretSyncs.azureKeyVault,
    destinationConfig: { vaultBaseUrl: azure.url },
    valueOf: (key) => azure.latest(key.replace(/_/g, "-")),
    count: () => azure.secrets.size,
  },
];

try {
  const boot = setupOk(
    await createKeywardClient({ baseUrl }).system.bootstrap({
      body: { email: "bench@keyward.test", password: "bench", organization: "Bench" },
    }),
  );
  const admin = createKeywardClient({ baseUrl, token: boot.identity.credentials.token });
  const { project } = setupOk(await admin.projects.create({ body: { projectName: "bench-sync" } }));
  const keys = Array.from({ length: SECRETS }, (_, i) => `SYNC_KEY_${String(i).padStart(5, "0")}`);
  for (let i = 0; i < keys.length; i += 100)
    setupOk(
      await admin.secretsV3.batchCreate({
        body: {
          workspaceId: project.id,
          environment: "dev",
          secretPath: "/",
          secrets: keys.slice(i, i + 100).map((secretKey) => ({ secretKey, secretValue: `value-${secretKey}` })),
        },
      }),
    );
  console.log(`a folder of ${SECRETS} secrets, pushed by the sync job (events, claims, ownership records)`);
  for (const c of CASES) {
    const connectionId = await c.connection(admin);
    const before = c.count();
    const started = performance.now();
    setupOk(
      await c.routes(admin).create({
        body: {
          name: `bench-${c.label
            .toLowerCase()
            .replace(/[^a-z]+/g, "-")
            .replace(/-$/, "")}`,
          projectId: project.id,
          connectionId,
          environment: "dev",
          secretPath: "/",
          syncOptions: {},
          destinationConfig: c.destinationConfig,
        } as never,
      }),
    );
    const first = await until(started, () => c.count() - before >= SECRETS, `${c.label} first sync`);
    const deliveries: number[] = [];
    for (let i = 0; i < CHANGES; i += 1) {
      const key = keys[i * 7]!;
      const value = `changed-${i}-${c.label}`;
      setupOk(
        await admin.secretsV3.update({
          params: { secretName: key },
          body: { workspaceId: project.id, environment: "dev", secretPath: "/", secretValue: value },
        }),
      );
      deliveries.push(await until(performance.now(), () => c.valueOf(key) === value, `${c.label} change`));
    }
    deliveries.sort((a, b) => a - b);
    console.log(
      `${c.label.padEnd(22)} first sync ${(first / 1_000).toFixed(2)} s; one change delivered in ${deliveries[Math.floor(deliveries.length / 2)]!.toFixed(0)} ms (median of ${CHANGES}, max ${deliveries.at(-1)!.toFixed(0)} ms)`,
    );
  }
} finally {
  await stopJobs();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await handle.close();
  await Promise.all([aws.close(), github.close(), gcp.close(), azure.close()]);
  storage.stop();
}
