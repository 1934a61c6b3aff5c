import { describe, expect, it } from "vitest";
import { getTestApp } from "../helpers/app";
import { expectOk, uniqueName } from "../helpers/tenant";

const INSTANCE_ADMIN_ONLY = {
  status: 403,
  body: {
    message:
      "You are attempting to modify an instance admin identity. This requires elevated instance admin privileges",
  },
};

/** The instance admin identity, and another admin identity of its organization that is not an instance admin. */
const rootOrgAdmin = async () => {
  const app = await getTestApp();
  const { admin_identity_id: instanceAdminId } = await app.deps.db
    .selectFrom("instance_config")
    .select("admin_identity_id")
    .executeTakeFirstOrThrow();
  const { org_id: orgId } = await app.deps.db
    .selectFrom("identities")
    .select("org_id")
    .where("id", "=", instanceAdminId)
    .executeTakeFirstOrThrow();
  const root = app.client(app.rootToken);
  const { identity } = expectOk(
    await root.identities.create({ body: { name: uniqueName("org-admin"), organizationId: orgId, role: "admin" } }),
  );
  expectOk(await root.tokenAuth.attach({ params: { identityId: identity.id }, body: {} }));
  const { accessToken } = expectOk(await root.tokenAuth.createToken({ params: { identityId: identity.id }, body: {} }));
  return { app, root, orgId, instanceAdminId, orgAdmin: app.client(accessToken) };
};

describe("the instance admin identity", () => {
  it("cannot be taken over by an organization admin who is not an instance admin", async () => {
    const { instanceAdminId, orgAdmin } = await rootOrgAdmin();
    const params = { identityId: instanceAdminId };
    // A token or client secret for it would carry instance-admin powers (creating organizations).
    expect(await orgAdmin.tokenAuth.createToken({ params, body: {} })).toMatchObject(INSTANCE_ADMIN_ONLY);
    expect(await orgAdmin.universalAuth.attach({ params, body: {} })).toMatchObject(INSTANCE_ADMIN_ONLY);
    expect(
      await orgAdmin.tokenAuth.update({ params, body: { accessTokenTrustedIps: [{ ipAddress: "10.0.0.1" }] } }),
    ).toMatchObject(INSTANCE_ADMIN_ONLY);
    expect(await orgAdmin.tokenAuth.revoke({ params })).toMatchObject(INSTANCE_ADMIN_ONLY);
    expect(await orgAdmin.identities.update({ params, body: { role: "no-access" } })).toMatchObject(
      INSTANCE_ADMIN_ONLY,
    );
    expect(await orgAdmin.system.createOrganization({ body: { name: uniqueName("org") } })).toMatchObject({
      status: 403,
    });

    // Reading it stays an ordinary org permission.
    expect((await orgAdmin.tokenAuth.get({ params })).status).toBe(200);
    expect((await orgAdmin.tokenAuth.listTokens({ params, query: {} })).status).toBe(200);
  });

  it("cannot get a client secret from an org admin once universal auth is attached", async () => {
    const { root, instanceAdminId, orgAdmin } = await rootOrgAdmin();
    const params = { identityId: instanceAdminId };
    const attached = await root.universalAuth.attach({ params, body: {} });
    if (attached.status === 400)
      expect(attached.body).toMatchObject({ message: "Failed to add universal auth to already configured identity" });
    else expect(attached.status).toBe(200);
    expect(await orgAdmin.universalAuth.createClientSecret({ params, body: {} })).toMatchObject(INSTANCE_ADMIN_ONLY);
    expect((await orgAdmin.universalAuth.listClientSecrets({ params })).status).toBe(200);
  });

  it("stays manageable by an instance admin, and other identities by org admins", async () => {
    const { root, orgId, instanceAdminId, orgAdmin } = await rootOrgAdmin();
    expectOk(await root.tokenAuth.update({ params: { identityId: instanceAdminId }, body: {} }));
    const { identity } = expectOk(
      await orgAdmin.identities.create({ body: { name: uniqueName("m"), organizationId: orgId, role: "member" } }),
    );
    expectOk(await orgAdmin.tokenAuth.attach({ params: { identityId: identity.id }, body: {} }));
    expectOk(await orgAdmin.tokenAuth.createToken({ params: { identityId: identity.id }, body: {} }));
    expectOk(await orgAdmin.identities.update({ params: { identityId: identity.id }, body: { role: "no-access" } }));
  });
});
