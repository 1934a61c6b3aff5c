import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app";
import { createTenant, expectOk, type Tenant } from "../helpers/tenant";
import { createSigningCertificate, createTestCa, startPathKeyServer, type Peer } from "../services/workload-peers";
import { MISSING_UUID, createBareIdentity, claimTemplateProbe } from "./helpers";

const SA = "deployer@my-project.iam.gserviceaccount.com";
type Signer = Awaited<ReturnType<typeof createSigningCertificate>>;

let google: Signer;
let account: Signer;
let keys: Peer;
let app: TestApp;

beforeAll(async () => {
  const ca = await createTestCa();
  google = await createSigningCertificate("google");
  account = await createSigningCertificate(SA);
  keys = await startPathKeyServer(ca, () => ({
    "/oauth2/v1/certs": { g1: google.certPem },
    [`/service_accounts/v1/metadata/x509/${encodeURIComponent(SA)}`]: { sa1: account.certPem },
  }));
  const caFile = join(mkdtempSync(join(tmpdir(), "keyward-gcp-")), "ca.pem");
  writeFileSync(caFile, ca.caPem);
  // Documented configuration only: Google's key-URL base (air-gapped installs) and the extra CA.
  app = await startTestApp({ GCP_KEYS_BASE_URL: keys.url, OUTBOUND_EXTRA_CA_FILE: caFile });
});
afterAll(async () => {
  await keys.close();
  await app.close();
});

const attach = async (tenant: Tenant, body: Record<string, unknown>) => {
  const identity = await createBareIdentity(tenant);
  expectOk(await tenant.admin.gcpAuth.attach({ params: { identityId: identity.id }, body: body as { type: "gce" } }));
  return identity;
};

const gceToken = (audience: string, claims: Record<string, unknown> = {}, signer = google, kid = "g1") =>
  new SignJWT({
    email: SA,
    google: { compute_engine: { project_id: "my-project", zone: "europe-west1-b", instance_name: "vm-1" } },
    ...claims,
  })
    .setProtectedHeader({ alg: "RS256", kid })
    .setIssuer("https://accounts.google.com")
    .setAudience(audience)
    .setSubject("1234567890")
    .setIssuedAt()
    .setExpirationTime("5m")
    .sign(signer.privateKey);

const iamToken = (audience: string, sub = SA, signer = account, exp: string | number = "5m") =>
  new SignJWT({})
    .setProtectedHeader({ alg: "RS256", kid: "sa1" })
    .setSubject(sub)
    .setAudience(audience)
    .setExpirationTime(exp)
    .sign(signer.privateKey);

const login = (tenant: Tenant, identityId: string, jwt: string) =>
  tenant.anonymous.gcpAuth.login({ body: { identityId, jwt } });

describe("GCP auth login", () => {
  it("logs in with a Google-signed instance token and records email, project and zone", async () => {
    const tenant = await createTenant(app);
    const identity = await attach(tenant, {
      type: "gce",
      allowedServiceAccounts: SA,
      allowedProjects: "my-project",
      allowedZones: "europe-west1-b, us-east1-c",
      accessTokenTTL: 60,
    });
    expect(expectOk(await login(tenant, identity.id, await gceToken(identity.id)))).toMatchObject({ expiresIn: 60 });
    const row = await app.deps.db
      .selectFrom("identity_access_token_claims as c")
      .innerJoin("identity_access_tokens as t", "t.id", "c.token_id")
      .select("c.claims")
      .where("t.identity_id", "=", identity.id)
      .executeTakeFirstOrThrow();
    expect(row.claims).toEqual({ type: "gce", email: SA, projectId: "my-project", zone: "europe-west1-b" });
  });

  it("refuses gce tokens for another audience, from another signer, and outside the allowed lists", async () => {
    const tenant = await createTenant(app);
    const identity = await attach(tenant, {
      type: "gce",
      allowedServiceAccounts: SA,
      allowedProjects: "my-project",
      allowedZones: "europe-west1-b",
    });
    expect((await login(tenant, identity.id, await gceToken(MISSING_UUID))).status).toBe(401);
    expect((await login(tenant, identity.id, await gceToken(identity.id, {}, account))).status).toBe(403);
    expect((await login(tenant, identity.id, await gceToken(identity.id, {}, google, "unknown"))).body).toMatchObject({
      message: "Invalid signing key",
    });
    const cases: [Record<string, unknown>, string][] = [
      [{ email: "other@my-project.iam.gserviceaccount.com" }, "Access denied: GCP service account not allowed."],
      [
        { google: { compute_engine: { project_id: "x", zone: "europe-west1-b" } } },
        "Access denied: GCP project not allowed.",
      ],
      [{ google: { compute_engine: { project_id: "my-project", zone: "x" } } }, "Access denied: GCP zone not allowed."],
    ];
    for (const [claims, message] of cases) {
      expect(await login(tenant, identity.id, await gceToken(identity.id, claims))).toMatchObject({
        status: 401,
        body: { message },
      });
    }
    expect(await login(tenant, MISSING_UUID, await gceToken(MISSING_UUID))).toMatchObject({
      status: 404,
      body: { message: "GCP auth method not found for identity, did you configure GCP auth?" },
    });
  });

  it("logs in with a service-account-signed JWT checked against the account's x509 keys", async () => {
    const tenant = await createTenant(app);
    const identity = await attach(tenant, { type: "iam", allowedServiceAccounts: SA, allowedProjects: "ignored" });
    expectOk(await login(tenant, identity.id, await iamToken(identity.id)));
    expect(await login(tenant, identity.id, await iamToken(MISSING_UUID))).toMatchObject({
      status: 401,
      body: { message: "Invalid audience in GCP IAM Token" },
    });
    expect(await login(tenant, identity.id, await iamToken(identity.id, "not-an-account"))).toMatchObject({
      status: 401,
      body: { message: "Invalid service account identifier" },
    });
    expect((await login(tenant, identity.id, await iamToken(identity.id, SA, google))).status).toBe(403);
    expect(await login(tenant, identity.id, await iamToken(identity.id, SA, account, 1))).toMatchObject({
      status: 403,
      body: { message: "jwt expired" },
    });
    const other = await attach(tenant, {
      type: "iam",
      allowedServiceAccounts: "someone@my-project.iam.gserviceaccount.com",
    });
    expect(await login(tenant, other.id, await iamToken(other.id))).toMatchObject({
      status: 401,
      body: { message: "Access denied: GCP service account not allowed." },
    });
  });
});

describe("GCP auth claims in permission templates", () => {
  it("grants what {{identity.auth.gcp.claims.zone}} names for the token's own login only", async () => {
    const tenant = await createTenant(app);
    const identity = await attach(tenant, { type: "gce" });
    const zones = ["europe-west1-b", "us-east1-c"];
    const status = await claimTemplateProbe(tenant, identity.id, "{{identity.auth.gcp.claims.zone}}", zones);
    const inZone = async (zone: string) =>
      expectOk(
        await login(
          tenant,
          identity.id,
          await gceToken(identity.id, { google: { compute_engine: { project_id: "my-project", zone } } }),
        ),
      ).accessToken;
    const europe = await inZone("europe-west1-b");
    const us = await inZone("us-east1-c");
    expect([await status(europe, "europe-west1-b"), await status(europe, "us-east1-c")]).toEqual([200, 403]);
    expect([await status(us, "us-east1-c"), await status(us, "europe-west1-b")]).toEqual([200, 403]);
  });
});
