import type { MutatingOperation } from "../../../src/modules/audit/audit-events";
import { createSqlSecret, leaseOf, scopeOf, sqlInputs, type LeaseScope } from "../../dynamic-secrets/helpers";
import { createProject, uniqueName, type Tenant } from "../../helpers/tenant";
import { ok, type Step } from "./runner";

type DynamicSecretOperation = Extract<MutatingOperation, `dynamicSecrets.${string}` | `dynamicSecretLeases.${string}`>;

/** The tenant's own project, `dev` at "/", against the PostgreSQL target of the global setup. */
const leaseScope = async (tenant: Tenant): Promise<LeaseScope> => {
  const project = await createProject(tenant);
  return { tenant, projectId: project.id, projectSlug: project.slug, environmentSlug: "dev", path: "/" };
};

const withSecret = async (tenant: Tenant) => {
  const scope = await leaseScope(tenant);
  return { scope, secret: await createSqlSecret(scope) };
};

const withLease = async (tenant: Tenant) => {
  const { scope, secret } = await withSecret(tenant);
  const { lease } = await leaseOf(scope, secret.name);
  return { scope, secret, lease };
};

export const DYNAMIC_SECRET_STEPS: Record<DynamicSecretOperation, Step> = {
  "dynamicSecrets.create": async ({ tenant, act }) => {
    const scope = await leaseScope(tenant);
    const name = uniqueName("pg");
    const { dynamicSecret } = ok(
      await act(() =>
        tenant.admin.dynamicSecrets.create({
          body: {
            ...scopeOf(scope),
            name,
            provider: { type: "sql-database", inputs: sqlInputs() },
            defaultTTL: "1h",
            maxTTL: "1d",
          },
        }),
      ),
    );
    return { projectId: scope.projectId, metadata: { dynamicSecretId: dynamicSecret.id, name } };
  },
  "dynamicSecrets.update": async ({ tenant, act }) => {
    const { scope, secret } = await withSecret(tenant);
    ok(
      await act(() =>
        tenant.admin.dynamicSecrets.update({
          params: { name: secret.name },
          body: { ...scopeOf(scope), data: { defaultTTL: "2h" } },
        }),
      ),
    );
    return { projectId: scope.projectId, metadata: { dynamicSecretId: secret.id, name: secret.name } };
  },
  "dynamicSecrets.delete": async ({ tenant, act }) => {
    const { scope, secret } = await withSecret(tenant);
    ok(
      await act(() =>
        tenant.admin.dynamicSecrets.delete({ params: { name: secret.name }, body: { ...scopeOf(scope) } }),
      ),
    );
    return { projectId: scope.projectId, metadata: { dynamicSecretId: secret.id, name: secret.name } };
  },
  "dynamicSecretLeases.create": async ({ tenant, act }) => {
    const { scope, secret } = await withSecret(tenant);
    const { lease } = ok(
      await act(() =>
        tenant.admin.dynamicSecretLeases.create({ body: { ...scopeOf(scope), dynamicSecretName: secret.name } }),
      ),
    );
    return {
      projectId: scope.projectId,
      metadata: { leaseId: lease.id, dynamicSecretId: secret.id, dynamicSecretName: secret.name },
    };
  },
  "dynamicSecretLeases.renew": async ({ tenant, act }) => {
    const { scope, secret, lease } = await withLease(tenant);
    ok(
      await act(() =>
        tenant.admin.dynamicSecretLeases.renew({ params: { leaseId: lease.id }, body: { ...scopeOf(scope) } }),
      ),
    );
    return { projectId: scope.projectId, metadata: { leaseId: lease.id, dynamicSecretId: secret.id } };
  },
  "dynamicSecretLeases.delete": async ({ tenant, act }) => {
    const { scope, secret, lease } = await withLease(tenant);
    ok(
      await act(() =>
        tenant.admin.dynamicSecretLeases.delete({ params: { leaseId: lease.id }, body: { ...scopeOf(scope) } }),
      ),
    );
    return { projectId: scope.projectId, metadata: { leaseId: lease.id, dynamicSecretId: secret.id } };
  },
};
