import { createSign, generateKeyPairSync } from "node:crypto";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createKeywardClient, ok } from "@keyward/client";
// The server's own fake Kubernetes TokenReview API (HTTPS under a CA of the test's own).
import { createTestCa, startTokenReviewApi, type Peer, type TestCa } from "../../server/test/services/workload-peers";
import { admin, keyward, unique, url } from "./helpers";
import { readIfAny, waitFor, workspace } from "./agent-helpers";
import { agent, logged, setSecrets, suite, useAgentSuite } from "./agent-suite";

useAgentSuite();

/**
 * Infisical's agent configs as its documentation writes them (YAML text), with only the address,
 * the paths and the template language (Liquid here, Go templates there) filled in.
 */
const REVIEWER = "reviewer-service-account-token";
let ca: TestCa;
let tokenReview: Peer;

beforeAll(async () => {
  ca = await createTestCa();
  tokenReview = await startTokenReviewApi(ca, {
    reviewer: REVIEWER,
    tokens: { "pod-token": { username: "system:serviceaccount:apps:web" } },
  });
});
afterAll(() => tokenReview.close());

/** An identity that may read the suite's project. */
const projectIdentity = async () => {
  const client = admin();
  const { identity } = await ok(
    client.identities.create({
      body: { name: unique("infisical"), organizationId: inject("orgId"), role: "no-access" },
    }),
  );
  await ok(
    client.projects.addIdentityMembership({
      params: { projectId: suite.scope.project.id, identityId: identity.id },
      body: { role: "viewer" },
    }),
  );
  return identity;
};

const templateFile = (dir: string, name: string) => {
  writeFileSync(
    join(dir, name),
    `{% listSecrets "${suite.scope.project.id}" "dev" "/" as all %}{% for s in all %}{{ s.key }}={{ s.value }}\n{% endfor %}`,
  );
};

const sinkTokenWorks = async (token: string) =>
  (await createKeywardClient({ baseUrl: url(), token }).accessTokens.self()).status === 200;

describe("keyward agent with Infisical's agent config", () => {
  it("universal auth: client-id and client-secret are files, the secret is removed on read and remembered for later logins; Infisical-only keys are accepted with one warning each", async () => {
    await setSecrets({ DB_URL: "postgres://one", API_KEY: "k1" });
    const ws = workspace();
    writeFileSync(ws.path("client-id"), `${suite.scope.clientId}\n`);
    writeFileSync(ws.path("client-secret"), `${suite.scope.clientSecret}\n`);
    templateFile(ws.dir, "my-dot-ev-secret-template");
    const file = ws.path("agent.yaml");
    writeFileSync(
      file,
      `infisical:
  address: "${url()}"
  exit-after-auth: false
  revoke-credentials-on-shutdown: false
  retry-strategy:
    max-retries: 3
    max-delay: "5s"
    base-delay: "200ms"
auth:
  type: "universal-auth"
  config:
    client-id: "./client-id"
    client-secret: "./client-secret"
    remove_client_secret_on_read: true
sinks:
  - type: "file"
    config:
      path: "./access-token"
cache:
  persistent:
    type: "kubernetes"
    path: "/home/infisical/cache"
    service-account-token-path: "/var/run/secrets/kubernetes.io/serviceaccount/token"
templates:
  - source-path: my-dot-ev-secret-template
    destination-path: ./.env
    config:
      polling-interval: 60s
      execute:
        timeout: 30
        command: ${ws.countCommand}
`,
    );
    const a = agent(file);
    const out = ws.path(".env");
    await waitFor("the first render", () => readIfAny(out)?.includes("DB_URL="));
    expect(readIfAny(out)).toBe("API_KEY=k1\nDB_URL=postgres://one\n");
    // The secret file is gone once read; the id file stays.
    expect(existsSync(ws.path("client-secret"))).toBe(false);
    expect(existsSync(ws.path("client-id"))).toBe(true);
    const first = readIfAny(ws.path("access-token"))!;
    expect(await sinkTokenWorks(first)).toBe(true);

    const warnings = a.lines.filter((l) => l.msg === "config key ignored");
    expect(warnings.map((l) => l.key).sort()).toEqual(["cache", "infisical.retry-strategy"]);
    expect(String(warnings.find((l) => l.key === "cache")!.reason)).toContain("held in memory only");

    // A revoked token makes it log in again, with the secret it remembered.
    await waitFor("the events stream", () => logged(a, "events stream connected"));
    await ok(createKeywardClient({ baseUrl: url() }).accessTokens.revoke({ body: { accessToken: first } }));
    await setSecrets({ API_KEY: "k2" });
    await waitFor("the change", () => readIfAny(out)?.includes("API_KEY=k2"), 15_000);
    expect(a.lines.filter((l) => l.msg === "logged in with universal auth")).toHaveLength(2);
    const second = readIfAny(ws.path("access-token"))!;
    expect(second).not.toBe(first);

    // revoke-credentials-on-shutdown: false leaves the token valid after SIGTERM.
    a.child.kill("SIGTERM");
    expect(await a.exited).toMatchObject({ code: 0 });
    expect(logged(a, "agent stopped")).toMatchObject({ revoked: false });
    expect(await sinkTokenWorks(second)).toBe(true);
    expect(a.stderr()).not.toContain(suite.scope.clientSecret);
  });

  it("kubernetes: identity-id is a file, the service-account token is read from its path at each login", async () => {
    const identity = await projectIdentity();
    await ok(
      admin().kubernetesAuth.attach({
        params: { identityId: identity.id },
        body: {
          kubernetesHost: tokenReview.url,
          caCert: ca.caPem,
          tokenReviewerJwt: REVIEWER,
          allowedNamespaces: "apps",
          allowedNames: "",
          allowedAudience: "",
        },
      }),
    );
    const ws = workspace();
    writeFileSync(ws.path("identity-id"), identity.id);
    writeFileSync(ws.path("sa-token"), "pod-token\n");
    templateFile(ws.dir, "template");
    const file = ws.path("agent.yaml");
    writeFileSync(
      file,
      `infisical:
  address: "${url()}"
auth:
  type: "kubernetes"
  config:
    identity-id: "./identity-id"
    service-account-token: "${ws.path("sa-token")}"
sinks:
  - type: "file"
    config:
      path: "./access-token"
templates:
  - source-path: ./template
    destination-path: ./secrets.env
`,
    );
    const a = agent(file);
    await waitFor("the render", () => readIfAny(ws.path("secrets.env"))?.includes("DB_URL="));
    expect(logged(a, "logged in with kubernetes")).toBeDefined();
    expect(await sinkTokenWorks(readIfAny(ws.path("access-token"))!)).toBe(true);
    expect(a.stderr()).not.toContain("pod-token");
  });

  it("jwt: a token file and identity-id-value; base64-template-content; exit-after-auth exits 0 and revokes nothing", async () => {
    const identity = await projectIdentity();
    const { publicKey, privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
    await ok(
      admin().jwtAuth.attach({
        params: { identityId: identity.id },
        body: {
          configurationType: "static",
          publicKeys: [publicKey.export({ type: "spki", format: "pem" }).toString()],
          boundIssuer: "https://ci.example",
          boundAudiences: "keyward",
          boundClaims: {},
        },
      }),
    );
    const now = Math.floor(Date.now() / 1000);
    const part = (o: unknown) => Buffer.from(JSON.stringify(o)).toString("base64url");
    const unsigned = `${part({ alg: "RS256", typ: "JWT" })}.${part({ iss: "https://ci.example", sub: "deploy-1", aud: "keyward", iat: now, exp: now + 600 })}`;
    const jwt = `${unsigned}.${createSign("RSA-SHA256").update(unsigned).sign(privateKey).toString("base64url")}`;
    const ws = workspace();
    writeFileSync(ws.path("ci.jwt"), jwt);
    const template = `{% getSecretByName "${suite.scope.project.id}" "dev" "/" "DB_URL" %}`;
    const file = ws.path("agent.yaml");
    writeFileSync(
      file,
      `infisical:
  address: "${url()}/api"
  exit-after-auth: true
auth:
  type: "jwt"
  config:
    identity-id-value: "${identity.id}"
    jwt-path: ./ci.jwt
sinks:
  - type: "file"
    config:
      path: "./access-token"
templates:
  - base64-template-content: ${Buffer.from(template).toString("base64")}
    destination-path: ./db-url
`,
    );
    const a = agent(file);
    expect(await a.exited).toMatchObject({ code: 0 });
    expect(readIfAny(ws.path("db-url"))).toMatch(/^postgres:\/\//);
    expect(logged(a, "logged in with jwt")).toBeDefined();
    expect(await sinkTokenWorks(readIfAny(ws.path("access-token"))!)).toBe(true);
  });

  it("still refuses keys neither Keyward nor Infisical knows, and says where a file-path credential could not be read", async () => {
    const ws = workspace();
    const typo = ws.path("typo.yaml");
    writeFileSync(
      typo,
      `infisical:
  address: "${url()}"
  exit-after-auth: false
  retry_strategy: {}
auth:
  type: "universal-auth"
  config:
    client-id: "./client-id"
    client-secret: "./client-secret"
    remove-client-secret-on-read: true
templatess: []
`,
    );
    const refused = await keyward(["agent", "--config", typo]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("Unrecognized key(s) in object: 'retry_strategy'");
    expect(refused.stderr).toContain("Unrecognized key(s) in object: 'remove-client-secret-on-read'");
    expect(refused.stderr).toContain("Unrecognized key(s) in object: 'templatess'");

    // A Keyward literal under Infisical's key: the value is taken as a path, and the log says so.
    const file = ws.path("agent.yaml");
    writeFileSync(
      file,
      `infisical:
  address: "${url()}"
auth:
  type: "universal-auth"
  config:
    client-id: "${suite.scope.clientId}"
    client-secret: "./client-secret"
`,
    );
    const a = agent(file);
    const failed = await waitFor("the failed login", () => logged(a, "login failed; retrying"));
    expect(String(failed.reason)).toContain("client-id names a file holding the value");
    expect(String(failed.reason)).toContain("client-id-value");
  });
});
