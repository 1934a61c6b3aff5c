import { describe, expect, it } from "vitest";
import { createTenant } from "../helpers/tenant";

const get = (baseUrl: string, path: string, token: string) =>
  fetch(`${baseUrl}${path}`, { headers: { authorization: `Bearer ${token}` } });

describe("route matching", () => {
  it("matches paths without regard to case or a trailing slash, as Express does, early and late routes alike", async () => {
    const tenant = await createTenant();
    const me = `/api/v1/identities/${tenant.adminIdentityId}`;
    for (const path of [
      me,
      `${me}/`,
      me.toUpperCase().replace(tenant.adminIdentityId.toUpperCase(), tenant.adminIdentityId),
    ]) {
      const res = await get(tenant.app.baseUrl, path, tenant.adminToken);
      expect(res.status, path).toBe(200);
      expect(((await res.json()) as { identity: { id: string } }).identity.id).toBe(tenant.adminIdentityId);
    }
    // Registered among the last routes of the contract.
    const streams = await get(tenant.app.baseUrl, "/API/v1/Audit-Log-Streams/", tenant.adminToken);
    expect(streams.status).toBe(200);
  });

  it("answers the JSON 404 for unknown paths, inside a known prefix or not, and for empty segments", async () => {
    const tenant = await createTenant();
    for (const path of ["/api/v1/kms/nothing-here", "/api/v9/kms/keys", "/api//v1/identities", "/api", "/api/v1"]) {
      const res = await get(tenant.app.baseUrl, path, tenant.adminToken);
      expect(res.status, path).toBe(404);
      expect(await res.json()).toMatchObject({ statusCode: 404 });
    }
  });
});
