import { webcrypto } from "node:crypto";
import { createServer, type Server } from "node:http";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createKeywardClient, ok, type KeywardClient } from "@keyward/client";
// The server's own fake cloud peers: Google's and Azure's key endpoints and an AWS STS checking SigV4.
import {
  createSigningCertificate,
  createTestCa,
  startPathKeyServer,
  startSts,
  type Peer,
} from "../../server/test/services/workload-peers";
import { unique } from "./helpers";
import { readIfAny, startKeyward, stopAgent, waitFor, workspace, type Running } from "./agent-helpers";
import { startServer, type ServerProcess } from "./server-process";

/**
 * The cloud logins end to end: a Keyward server of this file's own trusting the fake peers' CA
 * (OUTBOUND_EXTRA_CA_FILE, GCP_KEYS_BASE_URL, AZURE_KEYS_BASE_URL: its documented settings), and
 * the agent finding its credential where the official SDKs look, pointed at local servers by the
 * variables those SDKs honour (AWS_* credentials, GCE_METADATA_HOST, AZURE_POD_IDENTITY_AUTHORITY_HOST).
 */
const SA = "agent@my-project.iam.gserviceaccount.com";
const TENANT_ID = "72f988bf-86f1-41af-91ab-2d7cd011db47";
const OID = "9f1e2d3c-0000-4000-8000-000000000001";
const ACCOUNT = "123456789012";

type Signer = Awaited<ReturnType<typeof createSigningCertificate>>;
let google: Signer;
let account: Signer;
let azure: Signer;
let keys: Peer;
let sts: Awaited<ReturnType<typeof startSts>>;
let metadata: Server;
let metadataUrl: string;
const metadataSeen: string[] = [];
let server: ServerProcess;
let dataDir: string;
let client: KeywardClient;
let orgId: string;
let projectId: string;
const running: Running[] = [];

const signJwt = async (key: webcrypto.CryptoKey, header: object, payload: object) => {
  const part = (o: object) => Buffer.from(JSON.stringify(o)).toString("base64url");
  const unsigned = `${part(header)}.${part(payload)}`;
  const signature = await webcrypto.subtle.sign("RSASSA-PKCS1-v1_5", key, Buffer.from(unsigned));
  return `${unsigned}.${Buffer.from(signature).toString("base64url")}`;
};
const now = () => Math.floor(Date.now() / 1000);

beforeAll(async () => {
  const ca = await createTestCa();
  [google, account, azure] = await Promise.all([
    createSigningCertificate("google"),
    createSigningCertificate(SA),
    createSigningCertificate("azure"),
  ]);
  keys = await startPathKeyServer(ca, () => ({
    "/oauth2/v1/certs": { g1: google.certPem },
    [`/service_accounts/v1/metadata/x509/${encodeURIComponent(SA)}`]: { sa1: account.certPem },
    [`/${TENANT_ID}/discovery/keys`]: { keys: [{ kty: "RSA", use: "sig", kid: "a1", x5c: [azure.certDer] }] },
  }));
  sts = await startSts(ca, {
    AKIDAGENT: {
      secretAccessKey: "agent-secret",
      arn: `arn:aws:sts::${ACCOUNT}:assumed-role/app-runner/i-0abc`,
      account: ACCOUNT,
      userId: "AROAROLE:i-0abc",
    },
  });
  // The GCE metadata server and Azure's instance metadata service, over plain HTTP as on the VM.
  metadata = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? "/", "http://metadata");
      metadataSeen.push(url.pathname);
      if (url.pathname === "/computeMetadata/v1/instance/service-accounts/default/identity") {
        if (req.headers["metadata-flavor"] !== "Google") return res.writeHead(403).end();
        const token = await signJwt(
          google.privateKey,
          { alg: "RS256", kid: "g1", typ: "JWT" },
          {
            iss: "https://accounts.google.com",
            aud: url.searchParams.get("audience"),
            sub: "1234567890",
            email: SA,
            iat: now(),
            exp: now() + 300,
          },
        );
        return res.writeHead(200, { "content-type": "text/plain" }).end(token);
      }
      if (url.pathname === "/metadata/identity/oauth2/token") {
        if (req.headers.metadata !== "true") return res.writeHead(400).end();
        const token = await signJwt(
          azure.privateKey,
          { alg: "RS256", kid: "a1", typ: "JWT" },
          {
            iss: `https://sts.windows.net/${TENANT_ID}/`,
            aud: url.searchParams.get("resource"),
            tid: TENANT_ID,
            oid: OID,
            iat: now(),
            exp: now() + 300,
          },
        );
        return res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ access_token: token }));
      }
      // AWS: the container credentials endpoint (ECS, EKS Pod Identity) and IMDSv2, as the SDKs read them.
      const credentials = (token: string) =>
        JSON.stringify({
          AccessKeyId: "AKIDAGENT",
          SecretAccessKey: "agent-secret",
          Token: token,
          Expiration: new Date(Date.now() + 3_600_000).toISOString(),
        });
      if (url.pathname === "/v2/credentials/task") {
        if (req.headers.authorization !== "container-authorization") return res.writeHead(401).end();
        return res.writeHead(200, { "content-type": "application/json" }).end(credentials("container-session"));
      }
      if (url.pathname === "/latest/api/token") {
        if (req.method !== "PUT" || !req.headers["x-aws-ec2-metadata-token-ttl-seconds"])
          return res.writeHead(400).end();
        return res.writeHead(200).end("imds-session-token");
      }
      if (url.pathname.startsWith("/latest/meta-data/iam/security-credentials/")) {
        if (req.headers["x-aws-ec2-metadata-token"] !== "imds-session-token") return res.writeHead(401).end();
        const role = url.pathname.slice("/latest/meta-data/iam/security-credentials/".length);
        if (role === "") return res.writeHead(200).end("app-runner\n");
        if (role !== "app-runner") return res.writeHead(404).end();
        return res.writeHead(200, { "content-type": "application/json" }).end(credentials("imds-session"));
      }
      res.writeHead(404).end();
    })();
  });
  await new Promise<void>((resolve) => metadata.listen(0, "127.0.0.1", resolve));
  metadataUrl = `127.0.0.1:${(metadata.address() as AddressInfo).port}`;

  dataDir = mkdtempSync(join(tmpdir(), "keyward-cli-cloud-"));
  const caFile = join(dataDir, "peer-ca.pem");
  writeFileSync(caFile, ca.caPem);
  server = await startServer({
    port: 0,
    dataDir,
    env: { OUTBOUND_EXTRA_CA_FILE: caFile, GCP_KEYS_BASE_URL: keys.url, AZURE_KEYS_BASE_URL: keys.url },
  });
  const bootstrap = (await (
    await fetch(`${server.url}/api/v1/admin/bootstrap`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: "cloud@keyward.test", password: "cli-cloud-password", organization: "cloud" }),
    })
  ).json()) as { organization: { id: string }; identity: { credentials: { token: string } } };
  orgId = bootstrap.organization.id;
  client = createKeywardClient({ baseUrl: server.url, token: bootstrap.identity.credentials.token });
  const { project } = await ok(client.projects.create({ body: { projectName: unique("cloud") } }));
  projectId = project.id;
  await ok(
    client.secretsV4.batchUpdate({
      body: {
        projectId,
        environment: "dev",
        secretPath: "/",
        mode: "upsert",
        secrets: [{ secretKey: "CLOUD_KEY", secretValue: "from-the-cloud" }],
      },
    }),
  );
}, 120_000);

afterAll(async () => {
  await server?.stop();
  await Promise.all([keys?.close(), sts?.close()]);
  metadata?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});
afterEach(async () => {
  await Promise.all(running.splice(0).map(stopAgent));
});

const viewerIdentity = async () => {
  const { identity } = await ok(
    client.identities.create({ body: { name: unique("cloud-id"), organizationId: orgId, role: "no-access" } }),
  );
  await ok(
    client.projects.addIdentityMembership({ params: { projectId, identityId: identity.id }, body: { role: "viewer" } }),
  );
  return identity.id;
};

/** Infisical's documented config for `type` (identity-id a file), run with `env`, until its template renders. */
const runAgent = async (type: string, identityId: string, env: Record<string, string>, extra = "") => {
  const ws = workspace();
  writeFileSync(ws.path("identity-id"), `${identityId}\n`);
  writeFileSync(ws.path("template"), `{% getSecretByName "${projectId}" "dev" "/" "CLOUD_KEY" %}`);
  const file = ws.path("agent.yaml");
  writeFileSync(
    file,
    `infisical:
  address: "${server.url}"
auth:
  type: "${type}"
  config:
    identity-id: "./identity-id" # Path to the file containing the machine identity ID
${extra}sinks:
  - type: "file"
    config:
      path: "./access-token"
templates:
  - source-path: ./template
    destination-path: ./out
`,
  );
  const a = startKeyward(["agent", "--config", file], env);
  running.push(a);
  await waitFor(`the render after a ${type} login`, () => readIfAny(ws.path("out")) === "from-the-cloud", 20_000);
  expect(a.lines.find((l) => l.msg === `logged in with ${type}`)).toBeDefined();
  const token = readIfAny(ws.path("access-token"))!;
  expect((await createKeywardClient({ baseUrl: server.url, token }).accessTokens.self()).status).toBe(200);
  return { a, ws };
};

describe("keyward agent: cloud logins under Infisical's auth types", () => {
  it("aws-iam: signs sts:GetCallerIdentity with the AWS_* environment credentials", async () => {
    const identityId = await viewerIdentity();
    await ok(
      client.awsAuth.attach({
        params: { identityId },
        body: { stsEndpoint: `${sts.url}/`, allowedAccountIds: ACCOUNT },
      }),
    );
    const { a } = await runAgent("aws-iam", identityId, {
      AWS_ACCESS_KEY_ID: "AKIDAGENT",
      AWS_SECRET_ACCESS_KEY: "agent-secret",
      AWS_REGION: "eu-west-1",
    });
    // Signed for the region's STS host, forwarded by Keyward to its configured endpoint.
    expect(sts.hosts).toContain("sts.eu-west-1.amazonaws.com");
    expect(a.stderr()).not.toContain("agent-secret");
  });

  it("aws-iam: takes credentials from the container endpoint, else from IMDSv2, as the AWS SDKs do", async () => {
    const identityId = await viewerIdentity();
    await ok(
      client.awsAuth.attach({
        params: { identityId },
        body: { stsEndpoint: `${sts.url}/`, allowedAccountIds: ACCOUNT },
      }),
    );
    await runAgent("aws-iam", identityId, {
      AWS_CONTAINER_CREDENTIALS_FULL_URI: `http://${metadataUrl}/v2/credentials/task`,
      AWS_CONTAINER_AUTHORIZATION_TOKEN: "container-authorization",
      AWS_REGION: "eu-west-1",
    });
    expect(metadataSeen).toContain("/v2/credentials/task");
    await Promise.all(running.splice(0).map(stopAgent));
    await runAgent("aws-iam", identityId, {
      AWS_EC2_METADATA_SERVICE_ENDPOINT: `http://${metadataUrl}`,
      AWS_REGION: "eu-west-1",
    });
    expect(metadataSeen).toContain("/latest/api/token");
    expect(metadataSeen).toContain("/latest/meta-data/iam/security-credentials/app-runner");
  });

  it("gcp-id-token: an ID token for the identity from the GCE metadata server (GCE_METADATA_HOST)", async () => {
    const identityId = await viewerIdentity();
    await ok(client.gcpAuth.attach({ params: { identityId }, body: { type: "gce", allowedServiceAccounts: SA } }));
    await runAgent("gcp-id-token", identityId, { GCE_METADATA_HOST: metadataUrl });
    expect(metadataSeen).toContain("/computeMetadata/v1/instance/service-accounts/default/identity");
  });

  it("gcp-iam: a JWT signed with the service-account key file", async () => {
    const identityId = await viewerIdentity();
    await ok(client.gcpAuth.attach({ params: { identityId }, body: { type: "iam", allowedServiceAccounts: SA } }));
    const pkcs8 = Buffer.from(await webcrypto.subtle.exportKey("pkcs8", account.privateKey)).toString("base64");
    const keyDir = mkdtempSync(join(tmpdir(), "keyward-sa-"));
    const keyFile = join(keyDir, "service-account-key.json");
    writeFileSync(
      keyFile,
      JSON.stringify({
        type: "service_account",
        client_email: SA,
        private_key_id: "sa1",
        private_key: `-----BEGIN PRIVATE KEY-----\n${pkcs8.replace(/(.{64})/g, "$1\n")}\n-----END PRIVATE KEY-----\n`,
      }),
    );
    await runAgent("gcp-iam", identityId, {}, `    service-account-key: "${keyFile}"\n`);
  });

  it("azure: a managed-identity token from the instance metadata service (AZURE_POD_IDENTITY_AUTHORITY_HOST)", async () => {
    const identityId = await viewerIdentity();
    await ok(
      client.azureAuth.attach({
        params: { identityId },
        body: { tenantId: TENANT_ID, resource: "https://management.azure.com/", allowedServicePrincipalIds: OID },
      }),
    );
    await runAgent("azure", identityId, { AZURE_POD_IDENTITY_AUTHORITY_HOST: `http://${metadataUrl}` });
    expect(metadataSeen).toContain("/metadata/identity/oauth2/token");
  });
});
