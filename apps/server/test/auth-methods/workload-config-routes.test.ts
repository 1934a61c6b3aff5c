import { exportSPKI, generateKeyPair } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import { createTenant, expectOk, type Tenant } from "../helpers/tenant";
import { createBareIdentity, createProjectOwnedIdentity, createUnprivileged, type Client } from "./helpers";

type Status = Promise<{ status: number; body: unknown }>;
type ConfigRoutes = {
  attach: (client: Client, identityId: string) => Status;
  update: (client: Client, identityId: string) => Status;
  get: (client: Client, identityId: string) => Status;
  revoke: (client: Client, identityId: string) => Status;
};

let publicKey = "";
beforeAll(async () => {
  publicKey = await exportSPKI((await generateKeyPair("RS256")).publicKey);
});

const K8S = {
  kubernetesHost: "https://127.0.0.1:6443",
  allowedNamespaces: "ci",
  allowedNames: "",
  allowedAudience: "",
};
const AZURE = { tenantId: "72f988bf-86f1-41af-91ab-2d7cd011db47", resource: "https://management.azure.com/" };

const METHODS: Record<string, ConfigRoutes> = {
  kubernetes: {
    attach: (c, identityId) => c.kubernetesAuth.attach({ params: { identityId }, body: K8S }),
    update: (c, identityId) => c.kubernetesAuth.update({ params: { identityId }, body: { allowedNames: "api" } }),
    get: (c, identityId) => c.kubernetesAuth.get({ params: { identityId } }),
    revoke: (c, identityId) => c.kubernetesAuth.revoke({ params: { identityId } }),
  },
  gcp: {
    attach: (c, identityId) => c.gcpAuth.attach({ params: { identityId }, body: { type: "gce" } }),
    update: (c, identityId) => c.gcpAuth.update({ params: { identityId }, body: { allowedZones: "us-east1-c" } }),
    get: (c, identityId) => c.gcpAuth.get({ params: { identityId } }),
    revoke: (c, identityId) => c.gcpAuth.revoke({ params: { identityId } }),
  },
  aws: {
    attach: (c, identityId) => c.awsAuth.attach({ params: { identityId }, body: {} }),
    update: (c, identityId) =>
      c.awsAuth.update({ params: { identityId }, body: { allowedAccountIds: "111122223333" } }),
    get: (c, identityId) => c.awsAuth.get({ params: { identityId } }),
    revoke: (c, identityId) => c.awsAuth.revoke({ params: { identityId } }),
  },
  azure: {
    attach: (c, identityId) => c.azureAuth.attach({ params: { identityId }, body: AZURE }),
    update: (c, identityId) =>
      c.azureAuth.update({ params: { identityId }, body: { allowedServicePrincipalIds: "x" } }),
    get: (c, identityId) => c.azureAuth.get({ params: { identityId } }),
    revoke: (c, identityId) => c.azureAuth.revoke({ params: { identityId } }),
  },
  jwt: {
    attach: (c, identityId) =>
      c.jwtAuth.attach({
        params: { identityId },
        body: { configurationType: "static", publicKeys: [publicKey], boundClaims: {} },
      }),
    update: (c, identityId) =>
      c.jwtAuth.update({ params: { identityId }, body: { configurationType: "static", boundSubject: "x" } }),
    get: (c, identityId) => c.jwtAuth.get({ params: { identityId } }),
    revoke: (c, identityId) => c.jwtAuth.revoke({ params: { identityId } }),
  },
};

/** A configured org identity, a project-owned one, and a bare one, for one method. */
const configured = async (tenant: Tenant, routes: ConfigRoutes) => {
  const identity = await createBareIdentity(tenant);
  expectOk(await routes.attach(tenant.admin, identity.id));
  const { project, identity: owned } = await createProjectOwnedIdentity(tenant);
  expectOk(await routes.attach(tenant.admin, owned.id));
  return { identity, project, owned, bare: await createBareIdentity(tenant) };
};

describe.each(Object.entries(METHODS))("%s auth configuration routes", (_name, routes) => {
  it("refuse callers without permission (403) on attach, update, get and revoke, and change nothing", async () => {
    const tenant = await createTenant();
    const { identity, project, owned, bare } = await configured(tenant, routes);
    const outsider = (await createUnprivileged(tenant)).client;
    const member = (await createUnprivileged(tenant, project.id)).client;
    expect((await routes.attach(outsider, bare.id)).status).toBe(403);
    for (const [caller, target] of [
      [outsider, identity.id],
      [member, owned.id],
    ] as const) {
      expect((await routes.update(caller, target)).status).toBe(403);
      expect((await routes.get(caller, target)).status).toBe(403);
      expect((await routes.revoke(caller, target)).status).toBe(403);
    }
    expect((await routes.get(tenant.admin, bare.id)).status).not.toBe(200);
    expect((await routes.get(tenant.admin, identity.id)).status).toBe(200);
    expect((await routes.get(tenant.admin, owned.id)).status).toBe(200);
  });

  it("answer 404 for another tenant's identity on attach, update, get and revoke", async () => {
    const tenant = await createTenant();
    const { identity, bare } = await configured(tenant, routes);
    const other = (await createTenant()).admin;
    expect((await routes.attach(other, bare.id)).status).toBe(404);
    expect((await routes.update(other, identity.id)).status).toBe(404);
    expect((await routes.get(other, identity.id)).status).toBe(404);
    expect((await routes.revoke(other, identity.id)).status).toBe(404);
    expect((await routes.get(tenant.admin, identity.id)).status).toBe(200);
  });
});

describe("Kubernetes auth CA certificate and TLS verification", () => {
  const CA = "-----BEGIN CERTIFICATE-----\nX\n-----END CERTIFICATE-----";
  const REFUSED = {
    status: 400,
    body: {
      message:
        "TLS certificate verification cannot be disabled when a CA certificate is provided. Either remove the CA certificate or enable verification.",
    },
  };

  it("refuses a CA certificate with verification off on attach and update", async () => {
    const tenant = await createTenant();
    const k8s = tenant.admin.kubernetesAuth;
    const bare = await createBareIdentity(tenant);
    const attach = (body: Record<string, unknown>) =>
      k8s.attach({ params: { identityId: bare.id }, body: { ...K8S, ...body } });
    expect(await attach({ caCert: CA, verifyTlsCertificate: false })).toMatchObject(REFUSED);
    const unverified = expectOk(await attach({ verifyTlsCertificate: false })).identityKubernetesAuth;
    expect(unverified.verifyTlsCertificate).toBe(false);

    const update = (body: Record<string, unknown>) => k8s.update({ params: { identityId: bare.id }, body });
    expect(await update({ caCert: CA, verifyTlsCertificate: false })).toMatchObject(REFUSED);
    // A CA given without a word on verification turns it on.
    const pinned = expectOk(await update({ caCert: CA })).identityKubernetesAuth;
    expect(pinned).toMatchObject({ caCert: CA, verifyTlsCertificate: true });
    expect(await update({ verifyTlsCertificate: false })).toMatchObject(REFUSED);
    const cleared = expectOk(await update({ caCert: "", verifyTlsCertificate: false })).identityKubernetesAuth;
    expect(cleared).toMatchObject({ caCert: "", verifyTlsCertificate: false });
  });

  it("checks permission before the rule (403 for a caller who may not attach)", async () => {
    const tenant = await createTenant();
    const bare = await createBareIdentity(tenant);
    const outsider = await createUnprivileged(tenant);
    const res = await outsider.client.kubernetesAuth.attach({
      params: { identityId: bare.id },
      body: { ...K8S, caCert: CA, verifyTlsCertificate: false },
    });
    expect(res.status).toBe(403);
  });
});
