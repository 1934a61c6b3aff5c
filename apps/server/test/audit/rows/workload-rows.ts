import { SignJWT, exportSPKI, generateKeyPair } from "jose";
import { AUDIENCE, createBareIdentity, issuer, providerToken } from "../../auth-methods/helpers";
import { createTestCa, startTokenReviewApi, type TestCa } from "../../services/workload-peers";
import { type Tenant } from "../../helpers/tenant";
import { identityActor } from "./identity-rows";
import { ok, type Step } from "./runner";

const JWT_ISSUER = "https://ci.keyward.test";

type KeyPair = Awaited<ReturnType<typeof generateKeyPair>>;
let keys: Promise<KeyPair> | undefined;
const signingKey = () => (keys ??= generateKeyPair("RS256", { extractable: true }));

const signedJwt = async () =>
  new SignJWT({ sub: "deploy-api", aud: "keyward" })
    .setProtectedHeader({ alg: "RS256" })
    .setIssuer(JWT_ISSUER)
    .setIssuedAt()
    .setExpirationTime("5m")
    .sign((await signingKey()).privateKey);

/** An identity with static-key JWT auth: logins are checked against a key it holds, no peer needed. */
const jwtIdentity = async (tenant: Tenant) => {
  const identity = await createBareIdentity(tenant);
  const body = {
    configurationType: "static" as const,
    publicKeys: [await exportSPKI((await signingKey()).publicKey)],
    boundIssuer: JWT_ISSUER,
    boundClaims: {},
  };
  ok(await tenant.admin.jwtAuth.attach({ params: { identityId: identity.id }, body }));
  return identity;
};

const oidcBody = () => ({
  oidcDiscoveryUrl: issuer(),
  boundIssuer: issuer(),
  boundAudiences: AUDIENCE,
  boundClaims: {},
});

/** An identity with OIDC auth against the provider the global setup started. */
const oidcIdentity = async (tenant: Tenant) => {
  const identity = await createBareIdentity(tenant);
  ok(await tenant.admin.oidcAuth.attach({ params: { identityId: identity.id }, body: oidcBody() }));
  return identity;
};

const refused = (status: number) => {
  if (status < 400) throw new Error(`expected the login to be refused, got ${status}`);
};

export const JWT_OIDC_STEPS = {
  "jwtAuth.attach": (async ({ tenant, act }) => {
    const identity = await createBareIdentity(tenant);
    const body = {
      configurationType: "static" as const,
      publicKeys: [await exportSPKI((await signingKey()).publicKey)],
      boundIssuer: JWT_ISSUER,
      boundClaims: {},
    };
    ok(await act(() => tenant.admin.jwtAuth.attach({ params: { identityId: identity.id }, body })));
    return { projectId: null, metadata: { identityId: identity.id } };
  }) as Step,
  "jwtAuth.update": (async ({ tenant, act }) => {
    const identity = await jwtIdentity(tenant);
    ok(
      await act(() =>
        tenant.admin.jwtAuth.update({
          params: { identityId: identity.id },
          body: { configurationType: "static", accessTokenTTL: 600 },
        }),
      ),
    );
    return { projectId: null, metadata: { identityId: identity.id } };
  }) as Step,
  "jwtAuth.revoke": (async ({ tenant, act }) => {
    const identity = await jwtIdentity(tenant);
    ok(await act(() => tenant.admin.jwtAuth.revoke({ params: { identityId: identity.id } })));
    return { projectId: null, metadata: { identityId: identity.id } };
  }) as Step,
  "jwtAuth.login": (async ({ tenant, act }) => {
    const identity = await jwtIdentity(tenant);
    const jwt = await signedJwt();
    ok(await act(() => tenant.anonymous.jwtAuth.login({ body: { identityId: identity.id, jwt } })));
    return { projectId: null, actor: identityActor(identity.id), metadata: { identityId: identity.id } };
  }) as Step,
  "oidcAuth.attach": (async ({ tenant, act }) => {
    const identity = await createBareIdentity(tenant);
    ok(await act(() => tenant.admin.oidcAuth.attach({ params: { identityId: identity.id }, body: oidcBody() })));
    return { projectId: null, metadata: { identityId: identity.id } };
  }) as Step,
  "oidcAuth.update": (async ({ tenant, act }) => {
    const identity = await oidcIdentity(tenant);
    ok(
      await act(() =>
        tenant.admin.oidcAuth.update({ params: { identityId: identity.id }, body: { accessTokenTTL: 600 } }),
      ),
    );
    return { projectId: null, metadata: { identityId: identity.id } };
  }) as Step,
  "oidcAuth.revoke": (async ({ tenant, act }) => {
    const identity = await oidcIdentity(tenant);
    ok(await act(() => tenant.admin.oidcAuth.revoke({ params: { identityId: identity.id } })));
    return { projectId: null, metadata: { identityId: identity.id } };
  }) as Step,
  "oidcAuth.login": (async ({ tenant, act }) => {
    const identity = await oidcIdentity(tenant);
    const jwt = await providerToken("deploy-bot");
    ok(await act(() => tenant.anonymous.oidcAuth.login({ body: { identityId: identity.id, jwt } })));
    return { projectId: null, actor: identityActor(identity.id), metadata: { identityId: identity.id } };
  }) as Step,
};

/** A token signed by a key the identity does not trust, or from the provider for another audience. */
export const JWT_OIDC_FAILED_LOGINS = {
  "jwtAuth.login": (async ({ tenant, act }) => {
    const identity = await jwtIdentity(tenant);
    const stranger = await generateKeyPair("RS256");
    const jwt = await new SignJWT({ sub: "deploy-api" })
      .setProtectedHeader({ alg: "RS256" })
      .setIssuer(JWT_ISSUER)
      .setExpirationTime("5m")
      .sign(stranger.privateKey);
    refused((await act(() => tenant.anonymous.jwtAuth.login({ body: { identityId: identity.id, jwt } }))).status);
    return { projectId: null, actor: identityActor(identity.id), metadata: { identityId: identity.id } };
  }) as Step,
  "oidcAuth.login": (async ({ tenant, act }) => {
    const identity = await oidcIdentity(tenant);
    const jwt = await providerToken("deploy-bot", "https://elsewhere.test");
    refused((await act(() => tenant.anonymous.oidcAuth.login({ body: { identityId: identity.id, jwt } }))).status);
    return { projectId: null, actor: identityActor(identity.id), metadata: { identityId: identity.id } };
  }) as Step,
};

const REVIEWER = "reviewer-service-account-token";
let tokenReview: Promise<{ ca: TestCa; url: string }> | undefined;
/** A TokenReview API that knows one workload token, `ci-api`, and refuses `stranger`. */
const tokenReviewApi = () =>
  (tokenReview ??= (async () => {
    const ca = await createTestCa();
    const api = await startTokenReviewApi(ca, {
      reviewer: REVIEWER,
      delegators: [],
      tokens: { "ci-api": { username: "system:serviceaccount:ci:api" }, stranger: "unauthenticated" },
    });
    return { ca, url: api.url };
  })());

type Answer = Promise<{ status: number; body: unknown }>;

const attach: Record<"kubernetes" | "gcp" | "aws" | "azure", (tenant: Tenant, identityId: string) => Answer> = {
  kubernetes: async (tenant: Tenant, identityId: string) => {
    const api = await tokenReviewApi();
    const body = {
      kubernetesHost: api.url,
      caCert: api.ca.caPem,
      tokenReviewerJwt: REVIEWER,
      allowedNamespaces: "ci",
      allowedNames: "api",
      allowedAudience: "",
    };
    return tenant.admin.kubernetesAuth.attach({ params: { identityId }, body });
  },
  gcp: (tenant: Tenant, identityId: string) =>
    tenant.admin.gcpAuth.attach({
      params: { identityId },
      body: { type: "iam", allowedServiceAccounts: "deployer@my-project.iam.gserviceaccount.com" },
    }),
  aws: (tenant: Tenant, identityId: string) => tenant.admin.awsAuth.attach({ params: { identityId }, body: {} }),
  azure: (tenant: Tenant, identityId: string) =>
    tenant.admin.azureAuth.attach({
      params: { identityId },
      body: { tenantId: "72f988bf-86f1-41af-91ab-2d7cd011db47", resource: "https://management.azure.com/" },
    }),
};

const configured = async (method: keyof typeof attach, tenant: Tenant) => {
  const identity = await createBareIdentity(tenant);
  ok(await attach[method](tenant, identity.id));
  return identity;
};

const kubernetesIdentity = (tenant: Tenant) => configured("kubernetes", tenant);

const updated =
  (method: keyof typeof attach): Step =>
  async ({ tenant, act }) => {
    const identity = await configured(method, tenant);
    const params = { identityId: identity.id };
    const body = { accessTokenTTL: 600 };
    ok(
      await act((): Answer => {
        if (method === "kubernetes") return tenant.admin.kubernetesAuth.update({ params, body });
        if (method === "gcp") return tenant.admin.gcpAuth.update({ params, body: { ...body, type: "iam" } });
        if (method === "aws") return tenant.admin.awsAuth.update({ params, body });
        return tenant.admin.azureAuth.update({ params, body });
      }),
    );
    return { projectId: null, metadata: { identityId: identity.id } };
  };

const revoked =
  (method: keyof typeof attach): Step =>
  async ({ tenant, act }) => {
    const identity = await configured(method, tenant);
    const params = { identityId: identity.id };
    ok(
      await act((): Answer => {
        if (method === "kubernetes") return tenant.admin.kubernetesAuth.revoke({ params });
        if (method === "gcp") return tenant.admin.gcpAuth.revoke({ params });
        if (method === "aws") return tenant.admin.awsAuth.revoke({ params });
        return tenant.admin.azureAuth.revoke({ params });
      }),
    );
    return { projectId: null, metadata: { identityId: identity.id } };
  };

const attached =
  (method: keyof typeof attach): Step =>
  async ({ tenant, act }) => {
    const identity = await createBareIdentity(tenant);
    ok(await act(() => attach[method](tenant, identity.id)));
    return { projectId: null, metadata: { identityId: identity.id } };
  };

export const WORKLOAD_CONFIG_STEPS = {
  "kubernetesAuth.attach": attached("kubernetes"),
  "kubernetesAuth.update": updated("kubernetes"),
  "kubernetesAuth.revoke": revoked("kubernetes"),
  "kubernetesAuth.login": (async ({ tenant, act }) => {
    const identity = await kubernetesIdentity(tenant);
    ok(await act(() => tenant.anonymous.kubernetesAuth.login({ body: { identityId: identity.id, jwt: "ci-api" } })));
    return { projectId: null, actor: identityActor(identity.id), metadata: { identityId: identity.id } };
  }) as Step,
  "gcpAuth.attach": attached("gcp"),
  "gcpAuth.update": updated("gcp"),
  "gcpAuth.revoke": revoked("gcp"),
  "awsAuth.attach": attached("aws"),
  "awsAuth.update": updated("aws"),
  "awsAuth.revoke": revoked("aws"),
  "azureAuth.attach": attached("azure"),
  "azureAuth.update": updated("azure"),
  "azureAuth.revoke": revoked("azure"),
};

export const KUBERNETES_FAILED_LOGIN = {
  "kubernetesAuth.login": (async ({ tenant, act }) => {
    const identity = await kubernetesIdentity(tenant);
    const res = await act(() =>
      tenant.anonymous.kubernetesAuth.login({ body: { identityId: identity.id, jwt: "stranger" } }),
    );
    refused(res.status);
    return { projectId: null, actor: identityActor(identity.id), metadata: { identityId: identity.id } };
  }) as Step,
};
