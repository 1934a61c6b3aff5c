import { describe, expect, it } from "vitest";
import { createTenant, expectOk, type Tenant } from "../helpers/tenant";
import { AUDIENCE, MISSING_UUID, createBareIdentity, issuer, providerToken } from "../auth-methods/helpers";

type Answer = { status: number; body: Record<string, unknown> };

/** A POST with the given content type, as the GitHub Action sends its logins. */
const post = async (tenant: Tenant, path: string, contentType: string, body: string, token?: string) => {
  const res = await fetch(`${tenant.app.baseUrl}${path}`, {
    method: "POST",
    headers: { "content-type": contentType, ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body,
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> } satisfies Answer;
};

const form = (tenant: Tenant, path: string, fields: Record<string, string | string[]>, token?: string) =>
  post(tenant, path, "application/x-www-form-urlencoded", new URLSearchParams(flatten(fields)).toString(), token);

const json = (tenant: Tenant, path: string, fields: unknown, token?: string) =>
  post(tenant, path, "application/json", JSON.stringify(fields), token);

const flatten = (fields: Record<string, string | string[]>) =>
  Object.entries(fields).flatMap(([key, value]) =>
    (Array.isArray(value) ? value : [value]).map((v): [string, string] => [key, v]),
  );

/** The answer without its request id, which differs on every request. */
const withoutReqId = ({ status, body }: Answer) => {
  const { reqId, ...rest } = body;
  expect(reqId).toMatch(/^req-/);
  return { status, body: rest };
};

const universalAuthClient = async (tenant: Tenant) => {
  const identity = await createBareIdentity(tenant, "member");
  const { identityUniversalAuth } = expectOk(
    await tenant.admin.universalAuth.attach({ params: { identityId: identity.id }, body: { lockoutEnabled: false } }),
  );
  const { clientSecret } = expectOk(
    await tenant.admin.universalAuth.createClientSecret({ params: { identityId: identity.id }, body: {} }),
  );
  return { identity, clientId: identityUniversalAuth.clientId, clientSecret };
};

const UA_LOGIN = "/api/v1/auth/universal-auth/login";

describe("logins sent as HTML forms", () => {
  it("logs in with universal auth from a form body, and the token works", async () => {
    const tenant = await createTenant();
    const { identity, clientId, clientSecret } = await universalAuthClient(tenant);
    const login = await form(tenant, UA_LOGIN, { clientId, clientSecret });
    expect(login).toMatchObject({ status: 200, body: { tokenType: "Bearer", accessToken: expect.any(String) } });
    const me = await tenant.app
      .client(login.body.accessToken as string)
      .identities.get({ params: { identityId: identity.id } });
    expect(me.status).toBe(200);
    // Upper-case path and a trailing slash reach the same route, and so the same parser.
    expect((await form(tenant, `${UA_LOGIN.toUpperCase()}/`, { clientId, clientSecret })).status).toBe(200);
  });

  it("answers a form exactly as the same fields in JSON: wrong secret, unknown client, missing and repeated fields", async () => {
    const tenant = await createTenant();
    const { clientId } = await universalAuthClient(tenant);
    const cases: Record<string, string | string[]>[] = [
      { clientId, clientSecret: "wrong" },
      { clientId: MISSING_UUID, clientSecret: "wrong" },
      { clientSecret: "wrong" },
      {},
      { clientId: [clientId, clientId], clientSecret: "wrong" },
    ];
    for (const fields of cases) {
      const asForm = withoutReqId(await form(tenant, UA_LOGIN, fields));
      const asJson = withoutReqId(await json(tenant, UA_LOGIN, fields));
      expect(asForm).toEqual(asJson);
    }
    expect(withoutReqId(await form(tenant, UA_LOGIN, { clientId, clientSecret: "wrong" }))).toMatchObject({
      status: 401,
      body: { message: "Invalid credentials" },
    });
    expect((await form(tenant, UA_LOGIN, { clientSecret: "wrong" })).status).toBe(422);
  });

  it("logs in with OIDC auth from a form body", async () => {
    const tenant = await createTenant();
    const identity = await createBareIdentity(tenant, "member");
    expectOk(
      await tenant.admin.oidcAuth.attach({
        params: { identityId: identity.id },
        body: { oidcDiscoveryUrl: issuer(), boundIssuer: issuer(), boundAudiences: AUDIENCE, boundClaims: {} },
      }),
    );
    const jwt = await providerToken("deploy-bot");
    const login = await form(tenant, "/api/v1/auth/oidc-auth/login", { identityId: identity.id, jwt });
    expect(login).toMatchObject({ status: 200, body: { tokenType: "Bearer" } });
    const bad = { identityId: identity.id, jwt: "not-a-jwt" };
    expect(withoutReqId(await form(tenant, "/api/v1/auth/oidc-auth/login", bad))).toEqual(
      withoutReqId(await json(tenant, "/api/v1/auth/oidc-auth/login", bad)),
    );
  });

  it("validates an AWS login form as its JSON body", async () => {
    const tenant = await createTenant();
    const identity = await createBareIdentity(tenant);
    const path = "/api/v1/auth/aws-auth/login";
    const cases: Record<string, string>[] = [
      { identityId: identity.id },
      { identityId: identity.id, iamHttpRequestMethod: "POST", iamRequestBody: "x", iamRequestHeaders: "y" },
    ];
    for (const fields of cases) {
      const asForm = withoutReqId(await form(tenant, path, fields));
      expect(asForm.status).toBeGreaterThanOrEqual(400);
      expect(asForm).toEqual(withoutReqId(await json(tenant, path, fields)));
    }
  });

  it("refuses a form body on any other route with 415, naming application/json", async () => {
    const tenant = await createTenant();
    const { identity } = await universalAuthClient(tenant);
    const routes: [string, Record<string, string>][] = [
      ["/api/v1/projects", { projectName: "from-a-form" }],
      ["/api/v1/identities", { name: "from-a-form", organizationId: tenant.orgId, role: "member" }],
      [`/api/v1/auth/universal-auth/identities/${identity.id}/client-secrets`, { description: "x" }],
      ["/api/v3/gateways/login", { name: "x" }],
    ];
    for (const [path, fields] of routes) {
      const asForm = withoutReqId(await form(tenant, path, fields, tenant.adminToken));
      expect(asForm.status, path).toBe(415);
      expect(asForm.body, path).toMatchObject({
        statusCode: 415,
        error: "UnsupportedMediaType",
        message: expect.stringContaining("application/json"),
      });
    }
    const projects = expectOk(await tenant.admin.projects.list({ query: {} })).projects;
    expect(projects.map((p) => p.name)).not.toContain("from-a-form");
  });
});
