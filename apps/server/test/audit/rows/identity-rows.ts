import type { MutatingOperation } from "../../../src/modules/audit/audit-events";
import { createBareIdentity } from "../../auth-methods/helpers";
import { startTestApp } from "../../helpers/app";
import { createIdentity, createProject, uniqueName, type Tenant } from "../../helpers/tenant";
import { LDAP_TEST_USERS } from "../../services/slapd";
import { ok, type Step } from "./runner";

export type IdentityOperation = Extract<
  MutatingOperation,
  | `system.${string}`
  | `identities.${string}`
  | `projectIdentities.${string}`
  | `tokenAuth.${string}`
  | `accessTokens.${string}`
  | `universalAuth.${string}`
  | `ldapAuth.${string}`
>;

const ldapEnv = () => ({
  url: process.env.KEYWARD_TEST_LDAP_URL!,
  bindDN: process.env.KEYWARD_TEST_LDAP_BIND_DN!,
  bindPass: process.env.KEYWARD_TEST_LDAP_BIND_PASSWORD!,
  searchBase: process.env.KEYWARD_TEST_LDAP_BASE_DN!,
});

/** The identity that logged in is the actor of its login's event. */
export const identityActor = (identityId: string) => ({ type: "identity", metadata: { identityId } });

export const universalIdentity = async (tenant: Tenant) => {
  const identity = await createBareIdentity(tenant);
  ok(await tenant.admin.universalAuth.attach({ params: { identityId: identity.id }, body: {} }));
  const { clientId } = ok(
    await tenant.admin.universalAuth.get({ params: { identityId: identity.id } }),
  ).identityUniversalAuth;
  const { clientSecret, clientSecretData } = ok(
    await tenant.admin.universalAuth.createClientSecret({ params: { identityId: identity.id }, body: {} }),
  );
  return { identity, clientId, clientSecret, clientSecretId: clientSecretData.id };
};

export const ldapIdentity = async (tenant: Tenant) => {
  const identity = await createBareIdentity(tenant);
  ok(await tenant.admin.ldapAuth.attach({ params: { identityId: identity.id }, body: ldapEnv() }));
  return identity;
};

const projectIdentity = async (tenant: Tenant) => {
  const project = await createProject(tenant);
  const { identity } = ok(
    await tenant.admin.projectIdentities.create({
      params: { projectId: project.id },
      body: { name: uniqueName("svc") },
    }),
  );
  return { project, identity };
};

const issuedToken = async (tenant: Tenant) => {
  const identity = await createBareIdentity(tenant);
  ok(await tenant.admin.tokenAuth.attach({ params: { identityId: identity.id }, body: {} }));
  const issued = ok(await tenant.admin.tokenAuth.createToken({ params: { identityId: identity.id }, body: {} }));
  return { identity, issued };
};

export const IDENTITY_STEPS: Record<IdentityOperation, Step> = {
  "system.bootstrap": async ({ act }) => {
    const app = await startTestApp();
    try {
      // The test app bootstraps itself: a second instance's bootstrap is observed through its own events.
      const root = app.client(app.rootToken);
      const { auditLogs } = await act(async () => ok(await root.auditLogs.list({ query: { limit: 10 } })));
      const orgId = auditLogs[0]?.orgId;
      return {
        projectId: null,
        orgId,
        observed: auditLogs,
        actor: { type: "platform", metadata: {} },
        metadata: { orgId },
      };
    } finally {
      await app.close();
    }
  },
  "system.createOrganization": async ({ tenant, act }) => {
    const name = uniqueName("org");
    const created = ok(
      await act(() => tenant.app.client(tenant.app.rootToken).system.createOrganization({ body: { name } })),
    );
    const admin = tenant.app.client(created.identity.credentials.token);
    return {
      projectId: null,
      orgId: created.organization.id,
      listWith: { ...tenant, orgId: created.organization.id, admin },
      actor: { type: "identity", metadata: {} },
      metadata: { name, orgId: created.organization.id },
    };
  },
  "identities.create": async ({ tenant, act }) => {
    const name = uniqueName("identity");
    const { identity } = ok(
      await act(() =>
        tenant.admin.identities.create({ body: { name, organizationId: tenant.orgId, role: "no-access" } }),
      ),
    );
    return { projectId: null, metadata: { identityId: identity.id, name } };
  },
  "identities.update": async ({ tenant, act }) => {
    const identity = await createBareIdentity(tenant);
    ok(
      await act(() =>
        tenant.admin.identities.update({ params: { identityId: identity.id }, body: { name: "renamed" } }),
      ),
    );
    return { projectId: null, metadata: { identityId: identity.id, name: "renamed" } };
  },
  "identities.delete": async ({ tenant, act }) => {
    const identity = await createBareIdentity(tenant);
    ok(await act(() => tenant.admin.identities.delete({ params: { identityId: identity.id } })));
    return { projectId: null, metadata: { identityId: identity.id } };
  },
  "projectIdentities.create": async ({ tenant, act }) => {
    const project = await createProject(tenant);
    const name = uniqueName("svc");
    const { identity } = ok(
      await act(() => tenant.admin.projectIdentities.create({ params: { projectId: project.id }, body: { name } })),
    );
    return { projectId: project.id, metadata: { identityId: identity.id, name } };
  },
  "projectIdentities.update": async ({ tenant, act }) => {
    const { project, identity } = await projectIdentity(tenant);
    ok(
      await act(() =>
        tenant.admin.projectIdentities.update({
          params: { projectId: project.id, identityId: identity.id },
          body: { name: "renamed" },
        }),
      ),
    );
    return { projectId: project.id, metadata: { identityId: identity.id, name: "renamed" } };
  },
  "projectIdentities.delete": async ({ tenant, act }) => {
    const { project, identity } = await projectIdentity(tenant);
    ok(
      await act(() =>
        tenant.admin.projectIdentities.delete({ params: { projectId: project.id, identityId: identity.id } }),
      ),
    );
    return { projectId: project.id, metadata: { identityId: identity.id } };
  },
  "tokenAuth.attach": async ({ tenant, act }) => {
    const identity = await createBareIdentity(tenant);
    ok(await act(() => tenant.admin.tokenAuth.attach({ params: { identityId: identity.id }, body: {} })));
    return { projectId: null, metadata: { identityId: identity.id } };
  },
  "tokenAuth.update": async ({ tenant, act }) => {
    const { identity } = await issuedToken(tenant);
    ok(
      await act(() =>
        tenant.admin.tokenAuth.update({ params: { identityId: identity.id }, body: { accessTokenTTL: 600 } }),
      ),
    );
    return { projectId: null, metadata: { identityId: identity.id } };
  },
  "tokenAuth.revoke": async ({ tenant, act }) => {
    const { identity } = await issuedToken(tenant);
    ok(await act(() => tenant.admin.tokenAuth.revoke({ params: { identityId: identity.id } })));
    return { projectId: null, metadata: { identityId: identity.id } };
  },
  "tokenAuth.createToken": async ({ tenant, act }) => {
    const identity = await createBareIdentity(tenant);
    ok(await tenant.admin.tokenAuth.attach({ params: { identityId: identity.id }, body: {} }));
    const issued = ok(
      await act(() =>
        tenant.admin.tokenAuth.createToken({ params: { identityId: identity.id }, body: { name: "ci" } }),
      ),
    );
    return { projectId: null, metadata: { identityId: identity.id, tokenId: issued.tokenData.id, name: "ci" } };
  },
  "tokenAuth.updateToken": async ({ tenant, act }) => {
    const { identity, issued } = await issuedToken(tenant);
    ok(
      await act(() =>
        tenant.admin.tokenAuth.updateToken({ params: { tokenId: issued.tokenData.id }, body: { name: "renamed" } }),
      ),
    );
    return { projectId: null, metadata: { identityId: identity.id, tokenId: issued.tokenData.id } };
  },
  "tokenAuth.revokeTokenById": async ({ tenant, act }) => {
    const { identity, issued } = await issuedToken(tenant);
    ok(await act(() => tenant.admin.tokenAuth.revokeTokenById({ params: { tokenId: issued.tokenData.id } })));
    return { projectId: null, metadata: { identityId: identity.id, tokenId: issued.tokenData.id } };
  },
  "accessTokens.revoke": async ({ tenant, act }) => {
    const { identity, issued } = await issuedToken(tenant);
    ok(await act(() => tenant.anonymous.accessTokens.revoke({ body: { accessToken: issued.accessToken } })));
    return { projectId: null, actor: identityActor(identity.id), metadata: { identityId: identity.id } };
  },
  "accessTokens.renew": async ({ tenant, act }) => {
    const identity = await createIdentity(tenant, { tokenAuth: { accessTokenTTL: 60, accessTokenMaxTTL: 600 } });
    ok(await act(() => tenant.anonymous.accessTokens.renew({ body: { accessToken: identity.token } })));
    return { projectId: null, actor: identityActor(identity.id), metadata: { identityId: identity.id } };
  },
  "universalAuth.login": async ({ tenant, act }) => {
    const { identity, clientId, clientSecret } = await universalIdentity(tenant);
    ok(await act(() => tenant.anonymous.universalAuth.login({ body: { clientId, clientSecret } })));
    return { projectId: null, actor: identityActor(identity.id), metadata: { identityId: identity.id, clientId } };
  },
  "universalAuth.attach": async ({ tenant, act }) => {
    const identity = await createBareIdentity(tenant);
    ok(await act(() => tenant.admin.universalAuth.attach({ params: { identityId: identity.id }, body: {} })));
    return { projectId: null, metadata: { identityId: identity.id } };
  },
  "universalAuth.update": async ({ tenant, act }) => {
    const { identity } = await universalIdentity(tenant);
    ok(
      await act(() =>
        tenant.admin.universalAuth.update({ params: { identityId: identity.id }, body: { accessTokenTTL: 600 } }),
      ),
    );
    return { projectId: null, metadata: { identityId: identity.id } };
  },
  "universalAuth.revoke": async ({ tenant, act }) => {
    const { identity } = await universalIdentity(tenant);
    ok(await act(() => tenant.admin.universalAuth.revoke({ params: { identityId: identity.id } })));
    return { projectId: null, metadata: { identityId: identity.id } };
  },
  "universalAuth.createClientSecret": async ({ tenant, act }) => {
    const identity = await createBareIdentity(tenant);
    ok(await tenant.admin.universalAuth.attach({ params: { identityId: identity.id }, body: {} }));
    const created = ok(
      await act(() => tenant.admin.universalAuth.createClientSecret({ params: { identityId: identity.id }, body: {} })),
    );
    return { projectId: null, metadata: { identityId: identity.id, clientSecretId: created.clientSecretData.id } };
  },
  "universalAuth.revokeClientSecret": async ({ tenant, act }) => {
    const { identity, clientSecretId } = await universalIdentity(tenant);
    ok(
      await act(() =>
        tenant.admin.universalAuth.revokeClientSecret({ params: { identityId: identity.id, clientSecretId } }),
      ),
    );
    return { projectId: null, metadata: { identityId: identity.id, clientSecretId } };
  },
  "universalAuth.clearLockouts": async ({ tenant, act }) => {
    const { identity } = await universalIdentity(tenant);
    ok(await act(() => tenant.admin.universalAuth.clearLockouts({ params: { identityId: identity.id } })));
    return { projectId: null, metadata: { identityId: identity.id } };
  },
  "ldapAuth.login": async ({ tenant, act }) => {
    const identity = await ldapIdentity(tenant);
    ok(
      await act(() =>
        tenant.anonymous.ldapAuth.login({
          body: { identityId: identity.id, username: "alice", password: LDAP_TEST_USERS.alice.password },
        }),
      ),
    );
    return { projectId: null, actor: identityActor(identity.id), metadata: { identityId: identity.id } };
  },
  "ldapAuth.attach": async ({ tenant, act }) => {
    const identity = await createBareIdentity(tenant);
    ok(await act(() => tenant.admin.ldapAuth.attach({ params: { identityId: identity.id }, body: ldapEnv() })));
    return { projectId: null, metadata: { identityId: identity.id } };
  },
  "ldapAuth.update": async ({ tenant, act }) => {
    const identity = await ldapIdentity(tenant);
    ok(
      await act(() =>
        tenant.admin.ldapAuth.update({ params: { identityId: identity.id }, body: { accessTokenTTL: 600 } }),
      ),
    );
    return { projectId: null, metadata: { identityId: identity.id } };
  },
  "ldapAuth.revoke": async ({ tenant, act }) => {
    const identity = await ldapIdentity(tenant);
    ok(await act(() => tenant.admin.ldapAuth.revoke({ params: { identityId: identity.id } })));
    return { projectId: null, metadata: { identityId: identity.id } };
  },
  "ldapAuth.clearLockouts": async ({ tenant, act }) => {
    const identity = await ldapIdentity(tenant);
    ok(await act(() => tenant.admin.ldapAuth.clearLockouts({ params: { identityId: identity.id } })));
    return { projectId: null, metadata: { identityId: identity.id } };
  },
};
