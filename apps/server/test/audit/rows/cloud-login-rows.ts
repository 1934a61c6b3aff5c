import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SignJWT } from "jose";
import { vi } from "vitest";
import { createBareIdentity } from "../../auth-methods/helpers";
import { startTestApp } from "../../helpers/app";
import { createTenant, type Tenant } from "../../helpers/tenant";
import {
  createSigningCertificate,
  createTestCa,
  signSigV4,
  startPathKeyServer,
  startSts,
} from "../../services/workload-peers";
import { auditEventsWhen } from "../helpers";
import { identityActor } from "./identity-rows";
import { ok, sharedForFile, type Step } from "./runner";

const GCP_SA = "deployer@my-project.iam.gserviceaccount.com";
const AZURE_TENANT = "72f988bf-86f1-41af-91ab-2d7cd011db47";
const AZURE_OID = "9f1e2d3c-0000-4000-8000-000000000001";
const AWS_REGION = "eu-west-1";
const AWS_BODY = "Action=GetCallerIdentity&Version=2011-06-15";
const AWS_CALLER = {
  secretAccessKey: "user-secret",
  arn: "arn:aws:iam::111122223333:user/ci/deployer",
  account: "111122223333",
  userId: "AIDAUSER",
};

type Cloud = "gcp" | "aws" | "azure";
type Answer = Promise<{ status: number; body: unknown }>;

/** Google's and Azure's key servers and an STS, and an app told where they are (documented settings only). */
const startCloud = async () => {
  const ca = await createTestCa();
  const google = await createSigningCertificate(GCP_SA);
  const azure = await createSigningCertificate("azure");
  const keys = await startPathKeyServer(ca, () => ({
    [`/service_accounts/v1/metadata/x509/${encodeURIComponent(GCP_SA)}`]: { sa1: google.certPem },
    [`/${AZURE_TENANT}/discovery/keys`]: { keys: [{ kty: "RSA", use: "sig", kid: "a1", x5c: [azure.certDer] }] },
  }));
  const sts = await startSts(ca, { AKIDUSER: AWS_CALLER });
  const caFile = join(mkdtempSync(join(tmpdir(), "keyward-cloud-")), "ca.pem");
  writeFileSync(caFile, ca.caPem);
  const app = await startTestApp({
    GCP_KEYS_BASE_URL: keys.url,
    AZURE_KEYS_BASE_URL: keys.url,
    OUTBOUND_EXTRA_CA_FILE: caFile,
  });
  const close = async () => {
    await app.close();
    await Promise.all([keys.close(), sts.close()]);
  };
  return { app, google, azure, sts, close };
};
type CloudPeers = Awaited<ReturnType<typeof startCloud>>;
/** The key servers, the STS and their app, shared by a file's cloud login rows (each on a tenant of its own). */
const cloudPeers = sharedForFile(startCloud);

const attach = (cloud: Cloud, peers: CloudPeers, tenant: Tenant, identityId: string): Answer => {
  const params = { identityId };
  if (cloud === "gcp")
    return tenant.admin.gcpAuth.attach({ params, body: { type: "iam", allowedServiceAccounts: GCP_SA } });
  if (cloud === "aws") return tenant.admin.awsAuth.attach({ params, body: { stsEndpoint: `${peers.sts.url}/` } });
  return tenant.admin.azureAuth.attach({
    params,
    body: { tenantId: AZURE_TENANT, resource: "https://management.azure.com/", allowedServicePrincipalIds: AZURE_OID },
  });
};

/** A login that should pass, or (`genuine` false) one whose proof was signed with the wrong key. */
const login = async (cloud: Cloud, peers: CloudPeers, tenant: Tenant, identityId: string, genuine: boolean) => {
  const stranger = genuine ? undefined : await createSigningCertificate("stranger");
  if (cloud === "gcp") {
    const jwt = await new SignJWT({})
      .setProtectedHeader({ alg: "RS256", kid: "sa1" })
      .setSubject(GCP_SA)
      .setAudience(identityId)
      .setExpirationTime("5m")
      .sign((stranger ?? peers.google).privateKey);
    return () => tenant.anonymous.gcpAuth.login({ body: { identityId, jwt } });
  }
  if (cloud === "azure") {
    const jwt = await new SignJWT({ tid: AZURE_TENANT, oid: AZURE_OID, appid: "app-1" })
      .setProtectedHeader({ alg: "RS256", kid: "a1" })
      .setIssuer(`https://sts.windows.net/${AZURE_TENANT}/`)
      .setAudience("https://management.azure.com")
      .setIssuedAt()
      .setExpirationTime("5m")
      .sign((stranger ?? peers.azure).privateKey);
    return () => tenant.anonymous.azureAuth.login({ body: { identityId, jwt } });
  }
  const headers = signSigV4(
    {
      method: "POST",
      host: `sts.${AWS_REGION}.amazonaws.com`,
      body: AWS_BODY,
      headers: { "Content-Type": "application/x-www-form-urlencoded; charset=utf-8" },
    },
    {
      accessKeyId: "AKIDUSER",
      secretAccessKey: genuine ? AWS_CALLER.secretAccessKey : "wrong-secret",
      region: AWS_REGION,
    },
  );
  const encoded = (text: string) => Buffer.from(text).toString("base64");
  return () =>
    tenant.anonymous.awsAuth.login({
      body: {
        identityId,
        iamHttpRequestMethod: "POST",
        iamRequestBody: encoded(AWS_BODY),
        iamRequestHeaders: encoded(JSON.stringify({ ...headers, "Content-Length": String(AWS_BODY.length) })),
      },
    });
};

/**
 * A cloud login on the app that knows the key servers (their addresses are settings of the app), on a
 * tenant of its own: its events are gathered here, and the after-the-change warning is watched on
 * that app's logger.
 */
const cloudLogin =
  (cloud: Cloud, genuine: boolean): Step =>
  async ({ act }) => {
    const peers = await cloudPeers();
    const tenant = await createTenant(peers.app);
    const identity = await createBareIdentity(tenant);
    ok(await attach(cloud, peers, tenant, identity.id));
    const before = new Set((await auditEventsWhen(tenant, {}, () => true)).map((event) => event.id));
    const warn = vi.spyOn(peers.app.deps.logger, "warn");
    const call = await login(cloud, peers, tenant, identity.id, genuine);
    const res = await act(call);
    if (genuine) ok(res);
    else if (res.status < 400) throw new Error(`expected the login to be refused, got ${res.status}`);
    const fresh = <E extends { id: string }>(events: E[]) => events.filter((event) => !before.has(event.id));
    const observed = fresh(await auditEventsWhen(tenant, {}, (events) => fresh(events).length > 0));
    const late = warn.mock.calls.filter((c) => String(c[1] ?? c[0]).includes("audit event written after"));
    warn.mockRestore();
    if (late.length > 0) throw new Error("the login's event was written after its change, not with it");
    return {
      projectId: null,
      orgId: tenant.orgId,
      observed,
      actor: identityActor(identity.id),
      metadata: { identityId: identity.id },
    };
  };

export const CLOUD_LOGIN_STEPS = {
  "gcpAuth.login": cloudLogin("gcp", true),
  "awsAuth.login": cloudLogin("aws", true),
  "azureAuth.login": cloudLogin("azure", true),
};

export const CLOUD_FAILED_LOGINS = {
  "gcpAuth.login": cloudLogin("gcp", false),
  "awsAuth.login": cloudLogin("aws", false),
  "azureAuth.login": cloudLogin("azure", false),
};
