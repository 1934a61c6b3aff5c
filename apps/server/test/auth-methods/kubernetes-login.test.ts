import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTenant, expectOk, type Tenant } from "../helpers/tenant";
import { createTestCa, startTokenReviewApi, type Peer, type TestCa } from "../services/workload-peers";
import { MISSING_UUID, createBareIdentity, claimTemplateProbe } from "./helpers";

const REVIEWER = "reviewer-service-account-token";
const DELEGATOR = "workload-with-auth-delegator";

let ca: TestCa;
let api: Peer;

beforeAll(async () => {
  ca = await createTestCa();
  api = await startTokenReviewApi(ca, {
    reviewer: REVIEWER,
    delegators: [DELEGATOR],
    tokens: {
      "ci-api": { username: "system:serviceaccount:ci:api", audiences: ["https://kubernetes.default.svc", "keyward"] },
      "team-a-web": { username: "system:serviceaccount:team-a:web" },
      "prod-api": { username: "system:serviceaccount:prod:api" },
      "ci-worker": { username: "system:serviceaccount:ci:worker" },
      [DELEGATOR]: { username: "system:serviceaccount:ci:delegator" },
      "node-user": { username: "system:node:worker-1" },
      revoked: { error: "[invalid bearer token, service account token has been invalidated]" },
      stranger: "unauthenticated",
    },
  });
});
afterAll(() => api.close());

const attach = async (tenant: Tenant, body: Record<string, unknown> = {}) => {
  const identity = await createBareIdentity(tenant);
  const { identityKubernetesAuth } = expectOk(
    await tenant.admin.kubernetesAuth.attach({
      params: { identityId: identity.id },
      body: {
        kubernetesHost: api.url,
        caCert: ca.caPem,
        tokenReviewerJwt: REVIEWER,
        allowedNamespaces: "ci, team-*",
        allowedNames: "api, web, delegator",
        allowedAudience: "",
        ...body,
      },
    }),
  );
  return { identity, config: identityKubernetesAuth };
};

const login = (tenant: Tenant, identityId: string, jwt: string) =>
  tenant.anonymous.kubernetesAuth.login({ body: { identityId, jwt } });

describe("Kubernetes auth login", () => {
  it("reviews the token with the stored reviewer over the configured CA and issues the configured token", async () => {
    const tenant = await createTenant();
    const { identity } = await attach(tenant, { accessTokenTTL: 300, accessTokenMaxTTL: 600 });
    const res = expectOk(await login(tenant, identity.id, "ci-api"));
    expect(res).toMatchObject({ expiresIn: 300, accessTokenMaxTTL: 600, tokenType: "Bearer" });
    expectOk(await login(tenant, identity.id, "team-a-web"));
    const claims = await tenant.app.deps.db
      .selectFrom("identity_access_token_claims as c")
      .innerJoin("identity_access_tokens as t", "t.id", "c.token_id")
      .select(["c.auth_method", "c.claims"])
      .where("t.identity_id", "=", identity.id)
      .execute();
    expect(claims).toEqual(
      expect.arrayContaining([
        { auth_method: "kubernetes-auth", claims: { namespace: "ci", name: "api" } },
        { auth_method: "kubernetes-auth", claims: { namespace: "team-a", name: "web" } },
      ]),
    );
  });

  it("uses the caller's own token as reviewer when none is stored", async () => {
    const tenant = await createTenant();
    const { identity } = await attach(tenant, { tokenReviewerJwt: undefined });
    expectOk(await login(tenant, identity.id, DELEGATOR));
    expect(await login(tenant, identity.id, "ci-api")).toMatchObject({ status: 401 });
  });

  it("refuses what the reference refuses", async () => {
    const tenant = await createTenant();
    const { identity } = await attach(tenant);
    const cases: [string, number, string][] = [
      ["revoked", 401, "[invalid bearer token, service account token has been invalidated]"],
      ["stranger", 401, "Kubernetes token not authenticated"],
      [
        "node-user",
        400,
        'Invalid Kubernetes service account username format: "system:node:worker-1". Expected format: system:serviceaccount:<namespace>:<name>',
      ],
      ["prod-api", 401, "Access denied: K8s namespace not allowed."],
      ["ci-worker", 401, "Access denied: K8s name not allowed."],
    ];
    for (const [jwt, status, message] of cases) {
      expect(await login(tenant, identity.id, jwt), jwt).toMatchObject({ status, body: { message } });
    }
    expect(await login(tenant, MISSING_UUID, "ci-api")).toMatchObject({
      status: 404,
      body: { message: "Kubernetes auth method not found for identity, did you configure Kubernetes auth?" },
    });
  });

  it("checks the audience through the review and against the answer", async () => {
    const tenant = await createTenant();
    const { identity } = await attach(tenant, { allowedAudience: "keyward" });
    expectOk(await login(tenant, identity.id, "ci-api"));
    expect(await login(tenant, identity.id, "team-a-web")).toMatchObject({
      status: 401,
      body: { message: "[invalid bearer token, token audiences is invalid]" },
    });
  });

  it("refuses a wrong reviewer, an untrusted certificate, and gateway review until gateways carry traffic", async () => {
    const tenant = await createTenant();
    const { identity: wrong } = await attach(tenant, { tokenReviewerJwt: "not-the-reviewer" });
    expect(await login(tenant, wrong.id, "ci-api")).toMatchObject({
      status: 401,
      body: { message: expect.stringContaining("refused the token reviewer") },
    });
    const { identity: untrusted } = await attach(tenant, { caCert: "", verifyTlsCertificate: true });
    expect(await login(tenant, untrusted.id, "ci-api")).toMatchObject({
      status: 400,
      body: { message: expect.stringMatching(/^Failed to review token: /) },
    });
    const { identity: unverified } = await attach(tenant, { caCert: "", verifyTlsCertificate: false });
    expectOk(await login(tenant, unverified.id, "ci-api"));

    const { identity: viaGateway, config } = await attach(tenant);
    await tenant.app.deps.db
      .updateTable("identity_kubernetes_auths")
      .set({ token_review_mode: "gateway" })
      .where("auth_config_id", "=", config.id)
      .execute();
    expect(await login(tenant, viaGateway.id, "ci-api")).toMatchObject({
      status: 400,
      body: { message: expect.stringContaining("gateways do not carry traffic yet") },
    });
  });
});

describe("Kubernetes auth claims in permission templates", () => {
  it("grants what {{identity.auth.kubernetes.claims.namespace}} names for the token's own login only", async () => {
    const tenant = await createTenant();
    const { identity } = await attach(tenant);
    const template = "{{identity.auth.kubernetes.claims.namespace}}";
    const status = await claimTemplateProbe(tenant, identity.id, template, ["ci", "team-a"]);
    const ci = expectOk(await login(tenant, identity.id, "ci-api")).accessToken;
    const teamA = expectOk(await login(tenant, identity.id, "team-a-web")).accessToken;
    expect([await status(ci, "ci"), await status(ci, "team-a")]).toEqual([200, 403]);
    expect([await status(teamA, "team-a"), await status(teamA, "ci")]).toEqual([200, 403]);
  });
});
