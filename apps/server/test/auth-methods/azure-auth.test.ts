import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app";
import { createTenant, expectOk, type Tenant } from "../helpers/tenant";
import { createSigningCertificate, createTestCa, startPathKeyServer, type Peer } from "../services/workload-peers";
import { MISSING_UUID, createBareIdentity, createUnprivileged, claimTemplateProbe } from "./helpers";

const TENANT_ID = "72f988bf-86f1-41af-91ab-2d7cd011db47";
const RESOURCE = "https://management.azure.com/";
const OID = "9f1e2d3c-0000-4000-8000-000000000001";
type Signer = Awaited<ReturnType<typeof createSigningCertificate>>;

let azure: Signer;
let stranger: Signer;
let keys: Peer;
let app: TestApp;

beforeAll(async () => {
  const ca = await createTestCa();
  azure = await createSigningCertificate("azure");
  stranger = await createSigningCertificate("stranger");
  keys = await startPathKeyServer(ca, () => ({
    [`/${TENANT_ID}/discovery/keys`]: { keys: [{ kty: "RSA", use: "sig", kid: "a1", x5c: [azure.certDer] }] },
  }));
  const caFile = join(mkdtempSync(join(tmpdir(), "keyward-azure-")), "ca.pem");
  writeFileSync(caFile, ca.caPem);
  // Documented configuration only: Azure's key-URL base (air-gapped installs) and the extra CA.
  app = await startTestApp({ AZURE_KEYS_BASE_URL: keys.url, OUTBOUND_EXTRA_CA_FILE: caFile });
});
afterAll(async () => {
  await keys.close();
  await app.close();
});

const token = (claims: Record<string, unknown> = {}, signer = azure, kid = "a1") =>
  new SignJWT({ tid: TENANT_ID, oid: OID, appid: "app-1", ...claims })
    .setProtectedHeader({ alg: "RS256", kid })
    .setIssuer(`https://sts.windows.net/${TENANT_ID}/`)
    .setAudience("https://management.azure.com")
    .setIssuedAt()
    .setExpirationTime("5m")
    .sign(signer.privateKey);

const attach = async (tenant: Tenant, body: Record<string, unknown> = {}) => {
  const identity = await createBareIdentity(tenant);
  const { identityAzureAuth } = expectOk(
    await tenant.admin.azureAuth.attach({
      params: { identityId: identity.id },
      body: { tenantId: TENANT_ID, resource: RESOURCE, allowedServicePrincipalIds: OID, ...body },
    }),
  );
  return { identity, config: identityAzureAuth };
};

const login = (tenant: Tenant, identityId: string, jwt: string) =>
  tenant.anonymous.azureAuth.login({ body: { identityId, jwt } });

describe("Azure auth", () => {
  it("attaches, reads, updates and deletes; errors and 403 as the reference", async () => {
    const tenant = await createTenant(app);
    const { identity, config } = await attach(tenant, { allowedServicePrincipalIds: `${OID} ,other` });
    expect(config).toMatchObject({
      tenantId: TENANT_ID,
      resource: RESOURCE,
      allowedServicePrincipalIds: `${OID}, other`,
    });
    expect(
      expectOk(await tenant.admin.azureAuth.get({ params: { identityId: identity.id } })).identityAzureAuth,
    ).toEqual(config);
    expect(
      expectOk(
        await tenant.admin.azureAuth.update({ params: { identityId: identity.id }, body: { accessTokenTTL: 30 } }),
      ).identityAzureAuth,
    ).toMatchObject({ accessTokenTTL: 30, tenantId: TENANT_ID });
    const bare = await createBareIdentity(tenant);
    expect(
      (
        await tenant.admin.azureAuth.attach({
          params: { identityId: bare.id },
          body: { tenantId: "../x", resource: RESOURCE },
        })
      ).status,
    ).toBe(422);
    expect(
      await tenant.admin.azureAuth.attach({
        params: { identityId: identity.id },
        body: { tenantId: TENANT_ID, resource: RESOURCE },
      }),
    ).toMatchObject({ status: 400, body: { message: "Failed to add Azure Auth to already configured identity" } });
    const outsider = await createUnprivileged(tenant);
    expect((await outsider.client.azureAuth.get({ params: { identityId: identity.id } })).status).toBe(403);
    expect((await outsider.client.azureAuth.revoke({ params: { identityId: identity.id } })).status).toBe(403);
    const other = await createTenant(app);
    expect((await other.admin.azureAuth.get({ params: { identityId: identity.id } })).status).toBe(404);
    expectOk(await tenant.admin.azureAuth.revoke({ params: { identityId: identity.id } }));
    expect(await tenant.admin.azureAuth.get({ params: { identityId: identity.id } })).toMatchObject({ status: 400 });
  });

  it("logs in with a managed-identity token of the tenant for the resource and records the principal", async () => {
    const tenant = await createTenant(app);
    const { identity } = await attach(tenant, { accessTokenTTL: 45 });
    expect(expectOk(await login(tenant, identity.id, await token()))).toMatchObject({
      expiresIn: 45,
      tokenType: "Bearer",
    });
    const row = await app.deps.db
      .selectFrom("identity_access_token_claims as c")
      .innerJoin("identity_access_tokens as t", "t.id", "c.token_id")
      .select("c.claims")
      .where("t.identity_id", "=", identity.id)
      .executeTakeFirstOrThrow();
    expect(row.claims).toEqual({ tenantId: TENANT_ID, servicePrincipalId: OID, appId: "app-1" });
  });

  it("refuses other signers, keys, audiences, tenants and principals", async () => {
    const tenant = await createTenant(app);
    const { identity } = await attach(tenant);
    expect((await login(tenant, identity.id, await token({}, stranger))).status).toBe(403);
    expect(await login(tenant, identity.id, await token({}, azure, "unknown"))).toMatchObject({
      status: 401,
      body: { message: "Invalid signing key" },
    });
    const wrongAudience = await new SignJWT({ tid: TENANT_ID, oid: OID })
      .setProtectedHeader({ alg: "RS256", kid: "a1" })
      .setIssuer(`https://sts.windows.net/${TENANT_ID}/`)
      .setAudience("https://graph.microsoft.com")
      .setExpirationTime("5m")
      .sign(azure.privateKey);
    expect((await login(tenant, identity.id, wrongAudience)).status).toBe(403);
    expect(await login(tenant, identity.id, await token({ tid: "other" }))).toMatchObject({
      status: 401,
      body: { message: "Tenant ID mismatch" },
    });
    expect(await login(tenant, identity.id, await token({ oid: "someone" }))).toMatchObject({
      status: 401,
      body: { message: "Service principal 'someone' not allowed" },
    });
    expect(await login(tenant, identity.id, "garbage")).toMatchObject({
      status: 401,
      body: { message: "Invalid JWT" },
    });
    expect(await login(tenant, MISSING_UUID, await token())).toMatchObject({
      status: 404,
      body: { message: "Azure auth method not found for identity, did you configure Azure Auth?" },
    });
  });
});

describe("Azure auth claims in permission templates", () => {
  it("grants what {{identity.auth.azure.claims.appId}} names for the token's own login only", async () => {
    const tenant = await createTenant(app);
    const { identity } = await attach(tenant);
    const status = await claimTemplateProbe(tenant, identity.id, "{{identity.auth.azure.claims.appId}}", [
      "app-1",
      "app-2",
    ]);
    const first = expectOk(await login(tenant, identity.id, await token())).accessToken;
    const second = expectOk(await login(tenant, identity.id, await token({ appid: "app-2" }))).accessToken;
    expect([await status(first, "app-1"), await status(first, "app-2")]).toEqual([200, 403]);
    expect([await status(second, "app-2"), await status(second, "app-1")]).toEqual([200, 403]);
  });
});
