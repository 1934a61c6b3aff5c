import { describe, expect, it } from "vitest";
import { createIdentity, createTenant, expectOk } from "../helpers/tenant";
import { issuer, registerClient } from "./sso-helpers";

describe("an organization's OpenID Connect configuration", () => {
  it("is created, read and changed by org admins; its client secret is sealed and never returned", async () => {
    const tenant = await createTenant();
    const client = await registerClient(tenant.app.baseUrl);
    const body = {
      organizationId: tenant.orgId,
      configurationType: "discoveryURL" as const,
      discoveryURL: issuer(),
      clientId: client.client_id,
      clientSecret: client.client_secret,
      isActive: true,
      allowedEmailDomains: "Example.test,  other.test",
    };
    const created = expectOk(await tenant.admin.sso.createOidcConfig({ body }));
    expect(created).toMatchObject({
      orgId: tenant.orgId,
      clientId: client.client_id,
      allowedEmailDomains: "example.test, other.test",
    });
    expect(JSON.stringify(created)).not.toContain(client.client_secret);
    const stored = await tenant.app.deps.db
      .selectFrom("oidc_configs")
      .select("encrypted_client_secret")
      .where("org_id", "=", tenant.orgId)
      .executeTakeFirstOrThrow();
    expect(stored.encrypted_client_secret).not.toContain(client.client_secret);
    const read = expectOk(await tenant.admin.sso.getOidcConfig({ query: { organizationId: tenant.orgId } }));
    expect(read.id).toBe(created.id);
    expect(JSON.stringify(read)).not.toContain(client.client_secret);
    const changed = expectOk(
      await tenant.admin.sso.updateOidcConfig({ body: { organizationId: tenant.orgId, isActive: false } }),
    );
    expect(changed.isActive).toBe(false);

    expect((await tenant.admin.sso.createOidcConfig({ body })).status).toBe(400);
  });

  it("answers 403 without the right, 404 for another organization and none configured, 422 and 400 for bad providers", async () => {
    const tenant = await createTenant();
    const member = await createIdentity(tenant, { orgRole: "member" });
    const base = {
      organizationId: tenant.orgId,
      clientId: "c",
      clientSecret: "s",
      isActive: true,
    };
    expect(
      (
        await member.client.sso.createOidcConfig({
          body: { ...base, configurationType: "discoveryURL", discoveryURL: issuer() },
        })
      ).status,
    ).toBe(403);
    expect((await member.client.sso.getOidcConfig({ query: { organizationId: tenant.orgId } })).status).toBe(403);
    expect((await tenant.admin.sso.getOidcConfig({ query: { organizationId: tenant.orgId } })).status).toBe(404);
    const missing = await tenant.admin.sso.createOidcConfig({ body: { ...base, configurationType: "discoveryURL" } });
    expect(missing.status).toBe(422);
    expect(missing.body).toMatchObject({ message: "Discovery URL is required" });
    const custom = await tenant.admin.sso.createOidcConfig({
      body: { ...base, configurationType: "custom", issuer: "https://idp.example.test" },
    });
    expect(custom.status).toBe(422);
    const metadata = await tenant.admin.sso.createOidcConfig({
      body: { ...base, configurationType: "discoveryURL", discoveryURL: "http://169.254.169.254/latest" },
    });
    expect(metadata.status).toBe(400);
    const other = await createTenant();
    expect(
      (await other.admin.sso.updateOidcConfig({ body: { organizationId: tenant.orgId, isActive: false } })).status,
    ).toBe(403);
  });
});
