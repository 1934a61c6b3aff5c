import { buildOpenApiDocument } from "@keyward/client/openapi";
import { describe, expect, it } from "vitest";
import { createProject, createTenant } from "../helpers/tenant";
import { rawHttp } from "../secrets/helpers";

type Parameter = { in: string; name: string; required?: boolean };
type OpenApiOperation = { parameters?: Parameter[] };

const SOME_ID = "6f1c1d2e-8a4b-4c3d-9e2f-1a2b3c4d5e6f";

/** Every (method, path, optional query parameter) of the OpenAPI document. */
const optionalQueryParameters = () =>
  Object.entries(buildOpenApiDocument().paths).flatMap(([path, methods]) =>
    Object.entries(methods as Record<string, OpenApiOperation>).flatMap(([method, operation]) =>
      (operation.parameters ?? [])
        .filter((p) => p.in === "query" && !p.required)
        .map((p) => ({ method: method.toUpperCase(), path, name: p.name })),
    ),
  );

const namesOf = (body: unknown): string[] => {
  const message = (body as { message?: unknown } | undefined)?.message;
  return Array.isArray(message) ? message.map((issue: { path?: unknown[] }) => String(issue.path?.[0])) : [];
};

describe("an optional query parameter sent empty means it was not sent", () => {
  it("no route answers 422 naming an optional query parameter sent empty", async () => {
    const tenant = await createTenant();
    const params = optionalQueryParameters();
    expect(params.length).toBeGreaterThan(40);
    const refused: string[] = [];
    for (const { method, path, name } of params) {
      // Only reads: a write with a made-up id would be refused before validation matters anyway.
      if (method !== "GET") continue;
      const url = new URL(
        path.replace(/\{(\w+)\}/g, () => SOME_ID),
        tenant.app.baseUrl,
      );
      url.searchParams.set(name, "");
      const res = await fetch(url, { headers: { authorization: `Bearer ${tenant.adminToken}` } });
      const body: unknown = await res.json().catch(() => undefined);
      if (res.status === 422 && namesOf(body).includes(name)) refused.push(`${method} ${path} ${name}`);
    }
    expect(refused).toEqual([]);
  });

  it("the Go SDK's secret list, with every unset field sent empty, lists the secrets", async () => {
    const tenant = await createTenant();
    const project = await createProject(tenant);
    const http = rawHttp(tenant.app.baseUrl, tenant.adminToken);
    expect(
      (await http.post("/api/v3/secrets/raw/GO_SDK", { workspaceId: project.id, environment: "dev", secretValue: "v" }))
        .status,
    ).toBe(200);
    const url = new URL("/api/v3/secrets/raw", tenant.app.baseUrl);
    url.search = `workspaceId=${project.id}&workspaceSlug=&environment=dev&secretPath=&expandSecretReferences=&include_imports=&recursive=&tagSlugs=`;
    const res = await fetch(url, { headers: { authorization: `Bearer ${tenant.adminToken}` } });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { secrets: { secretKey: string; secretValue: string }[] };
    expect(body.secrets).toMatchObject([{ secretKey: "GO_SDK", secretValue: "v" }]);
  });

  it("a required query parameter sent empty is still refused, naming it", async () => {
    const tenant = await createTenant();
    const url = new URL("/api/v1/dynamic-secrets?projectSlug=&environmentSlug=dev", tenant.app.baseUrl);
    const res = await fetch(url, { headers: { authorization: `Bearer ${tenant.adminToken}` } });
    expect(res.status).toBe(422);
    expect(namesOf(await res.json())).toEqual(["projectSlug"]);
  });
});
