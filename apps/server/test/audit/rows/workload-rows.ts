import { SignJWT, exportSPKI, generateKeyPair } from "jose";
import { AUDIENCE, createBareIdentity, issuer, providerToken } from "../../auth-methods/helpers";
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
