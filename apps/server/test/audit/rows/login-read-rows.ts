import type { MutatingOperation, ReadOperation } from "../../../src/modules/audit/audit-events";
import { createProject, uniqueName, type Tenant } from "../../helpers/tenant";
import { CLOUD_FAILED_LOGINS } from "./cloud-login-rows";
import { identityActor, ldapIdentity, universalIdentity } from "./identity-rows";
import { ok, written, type Step } from "./runner";
import { JWT_OIDC_FAILED_LOGINS, KUBERNETES_FAILED_LOGIN } from "./workload-rows";
import { PIT_SSH_READ_STEPS } from "./pit-ssh-read-rows";

type LoginOperation = Extract<MutatingOperation, `${string}Auth.login`>;

const refused = (status: number) => {
  if (status < 400) throw new Error(`expected the login to be refused, got ${status}`);
};

/** Each login method refused once: its `-failed` event names the identity that was claimed. */
export const FAILED_LOGIN_STEPS: Record<LoginOperation, Step> = {
  "universalAuth.login": async ({ tenant, act }) => {
    const { identity, clientId } = await universalIdentity(tenant);
    const res = await act(() =>
      tenant.anonymous.universalAuth.login({ body: { clientId, clientSecret: uniqueName("wrong-secret") } }),
    );
    refused(res.status);
    return {
      projectId: null,
      actor: identityActor(identity.id),
      metadata: { identityId: identity.id, clientId, reasonCode: "UnauthorizedError" },
    };
  },
  "ldapAuth.login": async ({ tenant, act }) => {
    const identity = await ldapIdentity(tenant);
    const res = await act(() =>
      tenant.anonymous.ldapAuth.login({
        body: { identityId: identity.id, username: "alice", password: uniqueName("wrong-password") },
      }),
    );
    refused(res.status);
    return { projectId: null, actor: identityActor(identity.id), metadata: { identityId: identity.id } };
  },
  ...KUBERNETES_FAILED_LOGIN,
  ...CLOUD_FAILED_LOGINS,
  ...JWT_OIDC_FAILED_LOGINS,
};

type RecordedRead = Extract<
  ReadOperation,
  `secretsV${3 | 4}.${"list" | "get" | "getById"}` | "kms.privateKey" | "secretSearch.search"
>;

const secretIn = async (tenant: Tenant) => {
  const project = await createProject(tenant);
  const key = uniqueName("KEY").toUpperCase().replace(/-/g, "_");
  const { secret } = written(
    await tenant.admin.secretsV4.create({
      params: { secretName: key },
      body: { projectId: project.id, environment: "dev", secretValue: uniqueName("read-value") },
    }),
  );
  return { project, key, secret };
};

const reads = (version: "secretsV3" | "secretsV4") => {
  const scope = (projectId: string) =>
    version === "secretsV3" ? { workspaceId: projectId, environment: "dev" } : { projectId, environment: "dev" };
  return {
    list: (async ({ tenant, act }) => {
      const { project } = await secretIn(tenant);
      const list = tenant.admin[version].list as (args: {
        query: object;
      }) => Promise<{ status: number; body: unknown }>;
      ok(await act(() => list({ query: scope(project.id) })));
      return { projectId: project.id, metadata: { environment: "dev" } };
    }) as Step,
    get: (async ({ tenant, act }) => {
      const { project, key } = await secretIn(tenant);
      ok(
        await act(() => tenant.admin[version].get({ params: { secretName: key }, query: scope(project.id) as never })),
      );
      return { projectId: project.id, metadata: { environment: "dev", secretKey: key } };
    }) as Step,
    getById: (async ({ tenant, act }) => {
      const { project, secret } = await secretIn(tenant);
      ok(await act(() => tenant.admin[version].getById({ params: { secretId: secret.id } })));
      return { projectId: project.id, metadata: { secretId: secret.id } };
    }) as Step,
  };
};

const v3 = reads("secretsV3");
const v4 = reads("secretsV4");

export const READ_STEPS: Record<RecordedRead | keyof typeof PIT_SSH_READ_STEPS, Step> = {
  ...PIT_SSH_READ_STEPS,
  "secretsV3.list": v3.list,
  "secretsV3.get": v3.get,
  "secretsV3.getById": v3.getById,
  "secretsV4.list": v4.list,
  "secretsV4.get": v4.get,
  "secretsV4.getById": v4.getById,
  "secretSearch.search": async ({ tenant, act }) => {
    const { project, key } = await secretIn(tenant);
    ok(await act(() => tenant.admin.secretSearch.search({ params: { projectId: project.id }, query: { key } })));
    return { projectId: project.id, metadata: { includeValues: false } };
  },
  "kms.privateKey": async ({ tenant, act }) => {
    const project = ok(
      await tenant.admin.projects.create({ body: { projectName: uniqueName("kms"), type: "kms" } }),
    ).project;
    const { key } = ok(await tenant.admin.kms.create({ body: { projectId: project.id, name: uniqueName("key") } }));
    ok(await act(() => tenant.admin.kms.privateKey({ params: { keyId: key.id } })));
    return { projectId: project.id, metadata: { keyId: key.id } };
  },
};
