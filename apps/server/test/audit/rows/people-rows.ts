import type { MutatingOperation } from "../../../src/modules/audit/audit-events";
import { startTestApp } from "../../helpers/app";
import { startSmtpSink } from "../../helpers/smtp-sink";
import { createProject, createTenant, uniqueName, type Tenant } from "../../helpers/tenant";
import { mailedCode, postCode, signInAwaitingCode } from "../../sso/email-proof";
import { auditEvents } from "../helpers";
import { configureSso, refresh, signIn } from "../../sso/sso-helpers";
import { ok, type Step } from "./runner";

type PeopleOperation = Extract<
  MutatingOperation,
  `users.${string}` | `sso.${string}` | `sessions.${string}` | `userPrivileges.${string}` | `scim.${string}`
>;

/** A person of the tenant's organization, signed in through its provider. */
const person = async (tenant: Tenant) => {
  await configureSso(tenant);
  const email = `${uniqueName("person")}@example.test`;
  const session = await signIn(tenant, { sub: `sub-${email}`, email });
  const { user } = ok(await session.client.users.me());
  const membership = ok(await tenant.admin.users.listOrgMemberships({ params: { orgId: tenant.orgId } })).users.find(
    (m) => m.user?.id === user.id,
  )!;
  return { ...session, user, email, membership };
};

/** A person who is a member of a new project, with their project membership id. */
const projectPerson = async (tenant: Tenant) => {
  const { email, user } = await person(tenant);
  const project = await createProject(tenant);
  const params = { projectId: project.id };
  ok(await tenant.admin.users.inviteProjectMembers({ params, body: { emails: [email] } }));
  const membership = ok(await tenant.admin.users.listProjectMemberships({ params })).memberships[0]!;
  return { project, user, membershipId: membership.id };
};

const READ_SECRETS = [{ subject: "secrets" as const, action: ["read" as const] }];

const userActor = (user: { id: string; email: string }) => ({
  type: "user",
  metadata: { userId: user.id, email: user.email },
});

const scimTokenNamed = async (tenant: Tenant, description: string) =>
  ok(await tenant.admin.scim.listScimTokens({ query: { organizationId: tenant.orgId } })).scimTokens.find(
    (t) => t.description === description,
  );

export const PEOPLE_STEPS: Record<PeopleOperation, Step> = {
  "users.revokeMySessions": async ({ tenant, act }) => {
    const { client, user } = await person(tenant);
    ok(await act(() => client.users.revokeMySessions()));
    return { projectId: null, actor: userActor(user), metadata: { userId: user.id, sessions: 1 } };
  },
  "users.updateOrgMembership": async ({ tenant, act }) => {
    const { membership } = await person(tenant);
    const params = { orgId: tenant.orgId, membershipId: membership.id };
    ok(await act(() => tenant.admin.users.updateOrgMembership({ params, body: { role: "member" } })));
    return { projectId: null, metadata: { membershipId: membership.id, role: "member" } };
  },
  "users.deleteOrgMembership": async ({ tenant, act }) => {
    const { membership, user } = await person(tenant);
    const params = { orgId: tenant.orgId, membershipId: membership.id };
    ok(await act(() => tenant.admin.users.deleteOrgMembership({ params })));
    return { projectId: null, metadata: { membershipId: membership.id, userId: user.id } };
  },
  "users.inviteToOrg": async ({ tenant, act }) => {
    const email = `${uniqueName("invitee")}@example.test`;
    const body = { inviteeEmails: [email], organizationId: tenant.orgId, organizationRoleSlug: "member" };
    ok(await act(() => tenant.admin.users.inviteToOrg({ body })));
    return { projectId: null, metadata: { emails: [email], role: "member" } };
  },
  "users.inviteProjectMembers": async ({ tenant, act }) => {
    const { email, user } = await person(tenant);
    const project = await createProject(tenant);
    const params = { projectId: project.id };
    ok(await act(() => tenant.admin.users.inviteProjectMembers({ params, body: { emails: [email] } })));
    return { projectId: project.id, metadata: { userIds: [user.id], emails: [email] } };
  },
  "users.removeProjectMembers": async ({ tenant, act }) => {
    const { email, user } = await person(tenant);
    const project = await createProject(tenant);
    const params = { projectId: project.id };
    ok(await tenant.admin.users.inviteProjectMembers({ params, body: { emails: [email] } }));
    ok(await act(() => tenant.admin.users.removeProjectMembers({ params, body: { emails: [email] } })));
    return { projectId: project.id, metadata: { userIds: [user.id], emails: [email] } };
  },
  "sso.createOidcConfig": async ({ tenant, act }) => {
    const config = await act(() => configureSso(tenant));
    return { projectId: null, metadata: { oidcConfigId: config.id, isActive: true } };
  },
  "sso.updateOidcConfig": async ({ tenant, act }) => {
    const config = await configureSso(tenant);
    const body = { organizationId: tenant.orgId, isActive: false };
    ok(await act(() => tenant.admin.sso.updateOidcConfig({ body })));
    return { projectId: null, metadata: { oidcConfigId: config.id, isActive: false } };
  },
  "sso.verifyEmailCode": async ({ act }) => {
    // A person known to another organization proves their address with the mailed code: an app of
    // its own, with a mail server, whose events are gathered here.
    const sink = await startSmtpSink();
    const app = await startTestApp({ SMTP_URL: `smtp://127.0.0.1:${sink.port}` });
    try {
      const [v, x] = await Promise.all([createTenant(app), createTenant(app)]);
      // `person` turns on V's single sign-on itself.
      await configureSso(x);
      const { user, email } = await person(v);
      const jar = await signInAwaitingCode(x, { sub: uniqueName("x-subject"), email });
      const code = mailedCode(sink.received, email);
      const before = new Set((await auditEvents(x)).map((event) => event.id));
      const answer = await act(() => postCode(x, jar, code));
      if (answer.status !== 200) throw new Error(`verify-email answered ${answer.status}`);
      const observed = (await auditEvents(x)).filter((event) => !before.has(event.id));
      return {
        projectId: null,
        orgId: x.orgId,
        observed,
        actor: userActor(user),
        metadata: { userId: user.id, email },
      };
    } finally {
      await app.close();
      await sink.close();
    }
  },
  "sessions.refresh": async ({ tenant, act }) => {
    const { jar, user } = await person(tenant);
    const answer = await act(() => refresh(tenant.app.baseUrl, jar));
    if (answer.status !== 200) throw new Error(`refresh answered ${answer.status}`);
    return { projectId: null, actor: userActor(user), metadata: { reuseDetected: false } };
  },
  "sessions.logout": async ({ tenant, act }) => {
    const { jar, user } = await person(tenant);
    const answer = await act(() =>
      fetch(`${tenant.app.baseUrl}/api/v1/auth/logout`, { method: "POST", headers: { cookie: jar.header() } }),
    );
    if (answer.status !== 200) throw new Error(`logout answered ${answer.status}`);
    return { projectId: null, actor: userActor(user) };
  },
  "sessions.cliSession": async ({ tenant, act }) => {
    const { jar, user } = await person(tenant);
    const answer = await act(() =>
      fetch(`${tenant.app.baseUrl}/api/v1/auth/cli-session`, { method: "POST", headers: { cookie: jar.header() } }),
    );
    if (answer.status !== 200) throw new Error(`cli-session answered ${answer.status}`);
    return { projectId: null, actor: userActor(user) };
  },
  "userPrivileges.create": async ({ tenant, act }) => {
    const { project, user, membershipId } = await projectPerson(tenant);
    const body = { projectMembershipId: membershipId, slug: "reads", permissions: READ_SECRETS };
    ok(await act(() => tenant.admin.userPrivileges.create({ body })));
    return { projectId: project.id, metadata: { userId: user.id, slug: "reads" } };
  },
  "userPrivileges.update": async ({ tenant, act }) => {
    const { project, user, membershipId } = await projectPerson(tenant);
    const body = { projectMembershipId: membershipId, slug: "reads", permissions: READ_SECRETS };
    const { privilege } = ok(await tenant.admin.userPrivileges.create({ body }));
    const params = { privilegeId: privilege.id };
    ok(await act(() => tenant.admin.userPrivileges.update({ params, body: { slug: "reads-more" } })));
    return { projectId: project.id, metadata: { privilegeId: privilege.id, userId: user.id, slug: "reads-more" } };
  },
  "userPrivileges.delete": async ({ tenant, act }) => {
    const { project, user, membershipId } = await projectPerson(tenant);
    const body = { projectMembershipId: membershipId, slug: "reads", permissions: READ_SECRETS };
    const { privilege } = ok(await tenant.admin.userPrivileges.create({ body }));
    ok(await act(() => tenant.admin.userPrivileges.delete({ params: { privilegeId: privilege.id } })));
    return { projectId: project.id, metadata: { privilegeId: privilege.id, userId: user.id } };
  },
  "sessions.checkAuth": async ({ tenant, act }) => {
    ok(await act(() => tenant.admin.sessions.checkAuth()));
    return { projectId: null };
  },
  "scim.createScimToken": async ({ tenant, act }) => {
    const body = { organizationId: tenant.orgId, description: uniqueName("idp"), ttlDays: 30 };
    ok(await act(() => tenant.admin.scim.createScimToken({ body })));
    const token = await scimTokenNamed(tenant, body.description);
    return { projectId: null, metadata: { scimTokenId: token!.id, ttlDays: 30 } };
  },
  "scim.deleteScimToken": async ({ tenant, act }) => {
    ok(
      await tenant.admin.scim.createScimToken({ body: { organizationId: tenant.orgId, description: "", ttlDays: 0 } }),
    );
    const [token] = ok(await tenant.admin.scim.listScimTokens({ query: { organizationId: tenant.orgId } })).scimTokens;
    const params = { scimTokenId: token!.id };
    ok(await act(() => tenant.admin.scim.deleteScimToken({ params })));
    return { projectId: null, metadata: { scimTokenId: token!.id } };
  },
};
