import { describe, expect, it } from "vitest";
import { createTenant, expectOk, uniqueName } from "../helpers/tenant";
import { auditEvents, eventTypes } from "../audit/helpers";
import { GROUP_SCHEMA, PATCH_SCHEMA, createScimToken, scim, scimUser } from "./scim-helpers";

describe("SCIM audit events", () => {
  it("records each provisioning change with the SCIM token as its scimClient actor", async () => {
    const tenant = await createTenant();
    const token = await createScimToken(tenant);
    const { scimTokens } = expectOk(
      await tenant.admin.scim.listScimTokens({ query: { organizationId: tenant.orgId } }),
    );
    const tokenId = scimTokens[0]!.id;
    const address = `${uniqueName("scim")}@example.test`;
    const { body: user } = await scim(tenant, token, "POST", "/Users", scimUser(address));
    await scim(tenant, token, "PATCH", `/Users/${user.id}`, {
      schemas: [PATCH_SCHEMA],
      Operations: [{ op: "replace", path: "active", value: false }],
    });
    const { body: group } = await scim(tenant, token, "POST", "/Groups", {
      schemas: [GROUP_SCHEMA],
      displayName: uniqueName("team"),
    });
    await scim(tenant, token, "DELETE", `/Groups/${group.id}`);
    await scim(tenant, token, "DELETE", `/Users/${user.id}`);

    const events = await auditEvents(tenant, { actorType: "scimClient", actor: tokenId });
    expect(eventTypes(events).reverse()).toEqual([
      "scim-provision-user",
      "scim-deactivate-user",
      "scim-create-group",
      "scim-delete-group",
      "scim-deprovision-user",
    ]);
    expect(events[0]!.actor).toEqual({ type: "scimClient", metadata: { scimTokenId: tokenId } });
    expect(events.at(-1)!.event.metadata).toMatchObject({ membershipId: user.id, email: address });
    expect(JSON.stringify(events)).not.toContain(token);
  });
});
