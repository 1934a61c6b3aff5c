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
});
