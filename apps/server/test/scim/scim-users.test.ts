import { beforeAll, describe, expect, it } from "vitest";
import { createTenant, expectOk, uniqueName, type Tenant } from "../helpers/tenant";
import { PATCH_SCHEMA, createScimToken, expectScimError, scim, scimUser } from "./scim-helpers";

const email = () => `${uniqueName("scim")}@example.test`;

describe("SCIM users", () => {
  let tenant: Tenant;
  let token: string;
  beforeAll(async () => {
    tenant = await createTenant();
    token = await createScimToken(tenant);
  });

  it("provisions a person as a no-access member, known by the org membership id", async () => {
    const address = email();
    const created = await scim(tenant, token, "POST", "/Users", scimUser(address, { userName: `ext-${address}` }));
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.contentType).toContain("application/scim+json");
    expect(created.body).toMatchObject({
      userName: `ext-${address}`,
      name: { givenName: "Ada", familyName: "Lovelace" },
      emails: [{ primary: true, value: address, type: "work" }],
      displayName: "Ada Lovelace",
      active: true,
    });
    const members = expectOk(await tenant.admin.users.listOrgMemberships({ params: { orgId: tenant.orgId } })).users;
    expect(members.find((m) => m.id === created.body.id)).toMatchObject({
      role: "no-access",
      status: "accepted",
      isActive: true,
      user: { email: address },
    });
    const got = await scim(tenant, token, "GET", `/Users/${created.body.id}`);
    expect(got.body).toEqual(created.body);
    expectScimError(
      await scim(tenant, token, "POST", "/Users", scimUser(email(), { userName: `ext-${address}` })),
      409,
      "uniqueness",
    );
  });

  it("accepts application/json and refuses bodies that are not SCIM users", async () => {
    const address = email();
    const response = await fetch(`${tenant.app.baseUrl}/api/v1/scim/Users`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify(scimUser(address)),
    });
    expect(response.status).toBe(200);
    expectScimError(await scim(tenant, token, "POST", "/Users", { schemas: [] }), 400);
    expectScimError(await scim(tenant, token, "POST", "/Users", { userName: "no-mail" }), 400);
    expectScimError(await scim(tenant, token, "POST", "/Users", "{not json"), 400, "invalidSyntax");
    expectScimError(await scim(tenant, token, "POST", "/Users", { userName: "x".repeat(300_000) }), 413);
  });

  it("filters by userName, externalId, emails.value and displayName, and pages with the real total", async () => {
    const org = await createTenant();
    const orgToken = await createScimToken(org);
    const addresses = [email(), email(), email()];
    for (const [i, address] of addresses.entries()) {
      const body = scimUser(address, {
        userName: `user-${i}-${address}`,
        name: { givenName: `G${i}`, familyName: "F" },
      });
      expect((await scim(org, orgToken, "POST", "/Users", body)).status).toBe(200);
    }
    const all = await scim(org, orgToken, "GET", "/Users");
    expect(all.body).toMatchObject({
      schemas: ["urn:ietf:params:scim:api:messages:2.0:ListResponse"],
      totalResults: 3,
      startIndex: 1,
      itemsPerPage: 3,
    });
    const page = await scim(org, orgToken, "GET", "/Users?startIndex=2&count=1");
    expect(page.body).toMatchObject({ totalResults: 3, startIndex: 2, itemsPerPage: 1 });
    expect(page.body.Resources[0]!.id).toBe(all.body.Resources[1]!.id);
    const byUserName = await scim(
      org,
      orgToken,
      "GET",
      `/Users?filter=${encodeURIComponent(`userName eq "user-1-${addresses[1]}"`)}`,
    );
    expect(byUserName.body.totalResults).toBe(1);
    expect(byUserName.body.Resources[0]!.emails[0]!.value).toBe(addresses[1]);
    const byEmail = await scim(
      org,
      orgToken,
      "GET",
      `/Users?filter=${encodeURIComponent(`emails.value eq "${addresses[2]}"`)}`,
    );
    expect(byEmail.body.Resources.map((u) => u.userName)).toEqual([`user-2-${addresses[2]}`]);
    const byExternal = await scim(
      org,
      orgToken,
      "GET",
      `/Users?filter=${encodeURIComponent(`externalId eq "user-0-${addresses[0]}"`)}`,
    );
    expect(byExternal.body.totalResults).toBe(1);
    const byName = await scim(org, orgToken, "GET", `/Users?filter=${encodeURIComponent('displayName eq "G2 F"')}`);
    expect(byName.body.totalResults).toBe(1);
    const none = await scim(org, orgToken, "GET", `/Users?filter=${encodeURIComponent('userName eq "nobody"')}`);
    expect(none.body).toMatchObject({ totalResults: 0, Resources: [] });
    expectScimError(
      await scim(org, orgToken, "GET", `/Users?filter=${encodeURIComponent('title co "x"')}`),
      400,
      "invalidFilter",
    );
    expectScimError(await scim(org, orgToken, "GET", "/Users?count=abc"), 400);
    expect((await scim(org, orgToken, "GET", "/Users?count=1000")).body.itemsPerPage).toBe(3);
    // Another organization's token sees none of them.
    expect((await scim(tenant, token, "GET", `/Users/${all.body.Resources[0]!.id}`)).status).toBe(404);
  });

  it("replaces and patches a person; a missing person is 404 User not found", async () => {
    const address = email();
    const { body: user } = await scim(tenant, token, "POST", "/Users", scimUser(address));
    const replaced = await scim(tenant, token, "PUT", `/Users/${user.id}`, {
      ...scimUser(address, { userName: `renamed-${address}` }),
      name: { givenName: "Grace", familyName: "Hopper" },
    });
    expect(replaced.status, JSON.stringify(replaced.body)).toBe(200);
    expect(replaced.body).toMatchObject({ userName: `renamed-${address}`, displayName: "Grace Hopper", active: true });
    const { body: other } = await scim(tenant, token, "POST", "/Users", scimUser(email()));
    const clash = await scim(
      tenant,
      token,
      "PUT",
      `/Users/${user.id}`,
      scimUser(address, { userName: other.userName }),
    );
    expectScimError(clash, 409, "uniqueness");
    const { active: _a, ...withoutActive } = scimUser(address);
    expectScimError(await scim(tenant, token, "PUT", `/Users/${user.id}`, withoutActive), 400);

    const patched = await scim(tenant, token, "PATCH", `/Users/${user.id}`, {
      schemas: [PATCH_SCHEMA],
      Operations: [
        { op: "Replace", path: "name.givenName", value: "Anita" },
        { op: "replace", value: { "name.familyName": "Borg", title: "ignored" } },
        { op: "remove", path: "emails" },
      ],
    });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    expect(patched.body.name).toEqual({ givenName: "Anita", familyName: "Borg" });
    const off = await scim(tenant, token, "PATCH", `/Users/${user.id}`, {
      schemas: [PATCH_SCHEMA],
      Operations: [{ op: "replace", path: "active", value: "False" }],
    });
    expect(off.body.active).toBe(false);
    const on = await scim(tenant, token, "PATCH", `/Users/${user.id}`, {
      schemas: [PATCH_SCHEMA],
      Operations: [{ op: "replace", value: { active: true } }],
    });
    expect(on.body.active).toBe(true);
    expectScimError(
      await scim(tenant, token, "PATCH", `/Users/${user.id}`, { Operations: [{ op: "move", path: "active" }] }),
      400,
    );

    const missing = await scim(tenant, token, "GET", "/Users/00000000-0000-4000-8000-000000000000");
    expectScimError(missing, 404);
    expect(missing.body.detail).toBe("User not found");
    expectScimError(await scim(tenant, token, "PUT", "/Users/not-an-id", scimUser(address)), 404);
    expectScimError(await scim(tenant, token, "DELETE", "/Users/not-an-id"), 404);
  });

  it("deletes a person's membership, answering {}", async () => {
    const { body: user } = await scim(tenant, token, "POST", "/Users", scimUser(email()));
    const deleted = await scim(tenant, token, "DELETE", `/Users/${user.id}`);
    expect(deleted).toMatchObject({ status: 200, body: {} });
    expectScimError(await scim(tenant, token, "GET", `/Users/${user.id}`), 404);
    const members = expectOk(await tenant.admin.users.listOrgMemberships({ params: { orgId: tenant.orgId } })).users;
    expect(members.some((m) => m.id === user.id)).toBe(false);
  });
});
