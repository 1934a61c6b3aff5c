import { expect } from "vitest";
import { createIdentity, createProject, createTenant, expectOk, expectWritten, type Tenant } from "../helpers/tenant";
import { createFolder, insertCustomRole } from "../helpers/structure";
import type { PermissionRule } from "../../src/permissions";

/** A tenant with a secret-manager project (environments dev, staging, prod) and a raw fetch for it. */
export const createSecretsScope = async () => {
  const tenant = await createTenant();
  const project = await createProject(tenant);
  return { tenant, project, projectId: project.id, http: rawHttp(tenant.app.baseUrl, tenant.adminToken) };
};
export type SecretsScope = Awaited<ReturnType<typeof createSecretsScope>>;

/** A folder of dev as a name → value map, read through the v3 list. */
export const valuesAt = async (scope: SecretsScope, path = "/") => {
  const res = await scope.http.get("/api/v3/secrets/raw", {
    workspaceId: scope.projectId,
    environment: "dev",
    secretPath: path,
  });
  expect(res.status).toBe(200);
  return Object.fromEntries(
    (res.body.secrets as { secretKey: string; secretValue: string }[]).map((s) => [s.secretKey, s.secretValue]),
  );
};

/** Requests exactly as a client sends them (query strings, JSON bodies on GET and DELETE). */
export const rawHttp = (baseUrl: string, token: string) => {
  const call = async (
    method: string,
    path: string,
    options: { query?: Record<string, string>; body?: unknown; headers?: Record<string, string> } = {},
  ) => {
    const url = new URL(path, baseUrl);
    for (const [k, v] of Object.entries(options.query ?? {})) url.searchParams.set(k, v);
    const res = await fetch(url, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(options.body !== undefined ? { "content-type": "application/json" } : {}),
        ...options.headers,
      },
      body: options.body !== undefined ? JSON.stringify(options.body) : undefined,
    });
    const text = await res.text();
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const body: any = text ? JSON.parse(text) : undefined;
    return { status: res.status, body, headers: res.headers };
  };
  return {
    get: (path: string, query?: Record<string, string>, headers?: Record<string, string>) =>
      call("GET", path, { query, headers }),
    post: (path: string, body: unknown) => call("POST", path, { body }),
    patch: (path: string, body: unknown) => call("PATCH", path, { body }),
    delete: (path: string, body?: unknown) => call("DELETE", path, { body }),
    call,
  };
};
export type RawHttp = ReturnType<typeof rawHttp>;

/** Create a secret through v3 and fail loudly otherwise. */
export const putSecret = async (
  http: RawHttp,
  projectId: string,
  key: string,
  value: string,
  extra: Record<string, unknown> = {},
) => {
  const res = await http.post(`/api/v3/secrets/raw/${encodeURIComponent(key)}`, {
    workspaceId: projectId,
    environment: "dev",
    secretValue: value,
    ...extra,
  });
  if (res.status !== 200) throw new Error(`create ${key}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.secret as { id: string; version: number; secretKey: string };
};

/** An identity whose only project grant is a custom role with these rules. */
export const identityWithRules = async (scope: SecretsScope, rules: PermissionRule[]) => {
  const role = await insertCustomRole(scope.tenant, scope.projectId, rules);
  const identity = await createIdentity(scope.tenant, { projectId: scope.projectId, projectRole: role });
  return { ...identity, http: rawHttp(scope.tenant.app.baseUrl, identity.token) };
};

export const addImport = async (
  tenant: Tenant,
  projectId: string,
  path: string,
  from: { environment: string; path: string },
  environment = "dev",
) =>
  expectOk(
    await tenant.admin.secretImports.create({
      body: { workspaceId: projectId, environment, path, import: from },
    }),
  );

export { createFolder, expectOk, expectWritten };
