import { beforeAll, describe, expect, it } from "vitest";
import { sql } from "kysely";
import { createIdentity, createTenant, expectOk, type Tenant } from "../helpers/tenant";
import { createScimToken, expectScimError, scim } from "./scim-helpers";

describe("SCIM tokens", () => {
  let tenant: Tenant;
  beforeAll(async () => {
    tenant = await createTenant();
  });

  it("shows a token once, lists it without the secret, and keeps only its hash", async () => {
    const token = await createScimToken(tenant, 30);
    const { scimTokens } = expectOk(
      await tenant.admin.scim.listScimTokens({ query: { organizationId: tenant.orgId } }),
    );
    expect(scimTokens).toHaveLength(1);
    expect(scimTokens[0]).toMatchObject({ orgId: tenant.orgId, description: "identity provider", ttlDays: 30 });
    expect(JSON.stringify(scimTokens)).not.toContain(token);
    const rows = await sql<Record<string, unknown>>`select * from scim_tokens where org_id = ${tenant.orgId}`.execute(
      tenant.app.deps.db,
    );
    expect(rows.rows).toHaveLength(1);
    const stored = JSON.stringify(rows.rows[0], (_k, v: unknown) => (Buffer.isBuffer(v) ? v.toString("latin1") : v));
    expect(stored).not.toContain(token);
    expect(stored).not.toContain(token.slice(4));
    expect(rows.rows[0]!.expires_at).not.toBeNull();
    expect((await scim(tenant, token, "GET", "/Users")).status).toBe(200);
  });

  it("deletes a token: it no longer opens the SCIM routes", async () => {
    const token = await createScimToken(tenant);
    const before = expectOk(await tenant.admin.scim.listScimTokens({ query: { organizationId: tenant.orgId } }));
    const created = before.scimTokens.find((t) => t.ttlDays === 0)!;
    const deleted = expectOk(await tenant.admin.scim.deleteScimToken({ params: { scimTokenId: created.id } }));
    expect(deleted.scimToken.id).toBe(created.id);
    expectScimError(await scim(tenant, token, "GET", "/Users"), 401);
    const again = await tenant.admin.scim.deleteScimToken({ params: { scimTokenId: created.id } });
    expect(again.status).toBe(404);
  });

  it("is 403 without the scim permission and 404 for another organization", async () => {
    const weak = await createIdentity(tenant, { orgRole: "no-access" });
    const body = { organizationId: tenant.orgId, description: "", ttlDays: 0 };
    expect((await weak.client.scim.createScimToken({ body })).status).toBe(403);
    expect((await weak.client.scim.listScimTokens({ query: { organizationId: tenant.orgId } })).status).toBe(403);

    const other = await createTenant();
    const foreign = { organizationId: other.orgId, description: "", ttlDays: 0 };
    expect((await tenant.admin.scim.createScimToken({ body: foreign })).status).toBe(404);
    expect((await tenant.admin.scim.listScimTokens({ query: { organizationId: other.orgId } })).status).toBe(404);
    await createScimToken(other);
    const [theirs] = expectOk(
      await other.admin.scim.listScimTokens({ query: { organizationId: other.orgId } }),
    ).scimTokens;
    expect((await tenant.admin.scim.deleteScimToken({ params: { scimTokenId: theirs!.id } })).status).toBe(404);
  });

  it("refuses a bad ttl with 422", async () => {
    const body = { organizationId: tenant.orgId, description: "", ttlDays: 731 };
    expect((await tenant.admin.scim.createScimToken({ body })).status).toBe(422);
  });

  it("answers 401 with SCIM's error body for no token, a wrong token and an expired token", async () => {
    expectScimError(await scim(tenant, undefined, "GET", "/Users"), 401);
    expectScimError(await scim(tenant, "kws_wrongwrongwrongwrongwrongwrongwrong", "GET", "/Groups"), 401);
    const identityToken = tenant.adminToken;
    expectScimError(await scim(tenant, identityToken, "GET", "/Users"), 401);
    const token = await createScimToken(tenant, 1);
    expect((await scim(tenant, token, "GET", "/Users")).status).toBe(200);
    await sql`update scim_tokens set expires_at = now() - interval '1 minute' where org_id = ${tenant.orgId}
      and ttl_days = 1`.execute(tenant.app.deps.db);
    expectScimError(await scim(tenant, token, "GET", "/Users"), 401);
  });
});
