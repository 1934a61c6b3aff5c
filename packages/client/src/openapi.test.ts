import { describe, expect, it } from "vitest";
import { buildOpenApiDocument } from "./openapi";

describe("OpenAPI document", () => {
  it("carries the spec version and every contract path", () => {
    const doc = buildOpenApiDocument();
    expect(doc.info.version).toBe("0.0.1");
    expect(Object.keys(doc.paths)).toContain("/api/v1/auth/token-auth/identities/{identityId}");
    expect(Object.keys(doc.paths)).toContain("/api/v1/projects/{projectId}/identities");
    expect(Object.keys(doc.paths)).toContain("/api/v1/secret/{secretId}/secret-versions/{version}/rollback");
  });

  it("declares 503 on every route and 429 with Retry-After on the rate-limited ones", () => {
    const doc = buildOpenApiDocument();
    type Op = { responses: Record<string, { headers?: Record<string, unknown> }> };
    const op = (path: string, method: string) => (doc.paths[path]?.[method] as Op).responses;
    for (const [path, methods] of Object.entries(doc.paths)) {
      for (const method of Object.keys(methods)) {
        expect(op(path, method)["503"]?.headers, `${method} ${path}`).toHaveProperty("Retry-After");
      }
    }
    for (const [path, method] of [
      ["/api/v1/auth/universal-auth/login", "post"],
      ["/api/v3/gateways/login", "post"],
      ["/api/v1/auth/token/renew", "post"],
      ["/api/v1/auth/token/revoke", "post"],
      ["/api/v3/secrets/raw", "get"],
      ["/api/v4/secrets/{secretName}", "get"],
    ] as const) {
      expect(op(path, method)["429"]?.headers, `${method} ${path}`).toHaveProperty("Retry-After");
    }
    expect(op("/api/v1/identities", "get")).not.toHaveProperty("429");
    expect(op("/api/v4/secrets/{secretName}", "post")).not.toHaveProperty("429");
  });
});
