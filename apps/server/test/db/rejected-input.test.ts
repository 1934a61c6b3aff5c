import { describe, expect, it } from "vitest";
import { createTenant, expectOk } from "../helpers/tenant";

describe("values the database refuses", () => {
  it("answers 400, not 500, for a NUL character in text and in JSON", async () => {
    const tenant = await createTenant();
    const name = await tenant.admin.identities.create({
      body: { name: "bad\u0000name", organizationId: tenant.orgId, role: "member" },
    });
    expect(name.status).toBe(400);
    expect(name.body).toMatchObject({ statusCode: 400, error: "BadRequest" });
    const meta = await tenant.admin.projects.create({
      body: { projectName: "ok", projectDescription: "nul \u0000 inside" },
    });
    expect(meta.status).toBe(400);
    // Nothing half-written: the organization still has only its admin identity.
    const { identities } = expectOk(await tenant.admin.identities.list({ query: {} }));
    expect(identities).toHaveLength(1);
  });
});
