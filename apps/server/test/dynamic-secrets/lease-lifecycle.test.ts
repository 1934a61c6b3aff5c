import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { runRevocationPass } from "../../src/modules/dynamic-secrets/revocation-pass";
import { claimLease, releaseRenewal } from "../../src/modules/dynamic-secrets/lease.repository";
import { createIdentity, createTenant, expectOk } from "../helpers/tenant";
import {
  canLogin,
  createScope,
  createSqlSecret,
  leaseOf,
  roleExists,
  scopeOf,
  targetQuery,
  type LeaseScope,
} from "./helpers";

const roleValidUntil = async (name: string) =>
  new Date(
    (await targetQuery<{ until: Date }>("select rolvaliduntil as until from pg_roles where rolname = $1", [name]))[0]!
      .until,
  ).getTime();

describe("lease read, list, renew and revoke", () => {
  it("reads a lease with its dynamic secret and lists the secret's leases", async () => {
    const scope = await createScope();
    const secret = await createSqlSecret(scope);
    const first = await leaseOf(scope, secret.name);
    const second = await leaseOf(scope, secret.name);
    const got = expectOk(
      await scope.tenant.admin.dynamicSecretLeases.get({ params: { leaseId: first.lease.id }, query: scopeOf(scope) }),
    );
    expect(got.lease).toMatchObject({ id: first.lease.id, dynamicSecret: { id: secret.id, name: secret.name } });
    const listed = expectOk(
      await scope.tenant.admin.dynamicSecrets.listLeases({ params: { name: secret.name }, query: scopeOf(scope) }),
    );
    expect(listed.leases.map((l) => l.id).sort()).toEqual([first.lease.id, second.lease.id].sort());
  });

  it("renews from the current expiry, moves VALID UNTIL, and stops at the max TTL", async () => {
    const scope = await createScope();
    const secret = await createSqlSecret(scope, { defaultTTL: "10m", maxTTL: "30m" });
    const { lease, data } = await leaseOf(scope, secret.name);
    const renewed = expectOk(
      await scope.tenant.admin.dynamicSecretLeases.renew({
        params: { leaseId: lease.id },
        body: { ...scopeOf(scope), ttl: "15m" },
      }),
    ).lease;
    const newExpiry = new Date(renewed.expireAt).getTime();
    expect(newExpiry - new Date(lease.expireAt).getTime()).toBe(15 * 60_000);
    expect(Math.abs((await roleValidUntil(data.DB_USERNAME!)) - newExpiry)).toBeLessThan(1_000);
    expect(await canLogin(data.DB_USERNAME!, data.DB_PASSWORD!)).toBe(true);

    const beyond = await scope.tenant.admin.dynamicSecretLeases.renew({
      params: { leaseId: lease.id },
      body: { ...scopeOf(scope), ttl: "10m" },
    });
    expect(beyond.status).toBe(400);
    expect(beyond.body).toMatchObject({
      message: "The requested renewal would exceed the maximum allowed lease duration. Please choose a shorter TTL",
    });
  });

  it("answers 401, 422, 404 (missing, non-UUID, other project or tenant) and 403 on lease routes", async () => {
    const scope = await createScope();
    const secret = await createSqlSecret(scope);
    const { lease } = await leaseOf(scope, secret.name);
    const params = { leaseId: lease.id };
    const admin = scope.tenant.admin.dynamicSecretLeases;
    expect((await scope.tenant.anonymous.dynamicSecretLeases.get({ params, query: scopeOf(scope) })).status).toBe(401);
    expect((await scope.tenant.anonymous.dynamicSecretLeases.renew({ params, body: scopeOf(scope) })).status).toBe(401);
    expect((await scope.tenant.anonymous.dynamicSecretLeases.delete({ params, body: scopeOf(scope) })).status).toBe(
      401,
    );
    expect((await admin.renew({ params, body: { ...scopeOf(scope), ttl: "1s" } })).status).toBe(422);
    expect((await admin.delete({ params, body: { ...scopeOf(scope), environmentSlug: "" } })).status).toBe(422);
    expect((await admin.get({ params, query: { ...scopeOf(scope), projectSlug: "" } })).status).toBe(422);

    for (const leaseId of ["not-a-uuid", "00000000-0000-4000-8000-000000000000"]) {
      const res = await admin.get({ params: { leaseId }, query: scopeOf(scope) });
      expect(res.body).toMatchObject({
        statusCode: 404,
        message: `Dynamic secret lease with ID '${leaseId}' not found`,
      });
      expect((await admin.renew({ params: { leaseId }, body: scopeOf(scope) })).status).toBe(404);
      expect((await admin.delete({ params: { leaseId }, body: scopeOf(scope) })).status).toBe(404);
    }
    // The same lease id addressed through another project of the same tenant is not found.
    const otherScope = { ...(await createScope()), tenant: scope.tenant };
    const otherProject = expectOk(await scope.tenant.admin.projects.create({ body: { projectName: "other" } })).project;
    const elsewhere = { ...scopeOf(otherScope), projectSlug: otherProject.slug };
    expect((await admin.get({ params, query: elsewhere })).status).toBe(404);
    expect((await admin.delete({ params, body: elsewhere })).status).toBe(404);
    expect((await admin.get({ params, query: { ...scopeOf(scope), environmentSlug: "prod" } })).status).toBe(404);
    const stranger = await createTenant();
    expect((await stranger.admin.dynamicSecretLeases.get({ params, query: scopeOf(scope) })).status).toBe(404);

    const viewer = await createIdentity(scope.tenant, { projectId: scope.projectId, projectRole: "viewer" });
    expect((await viewer.client.dynamicSecretLeases.get({ params, query: scopeOf(scope) })).status).toBe(403);
    expect((await viewer.client.dynamicSecretLeases.renew({ params, body: scopeOf(scope) })).status).toBe(403);
    expect((await viewer.client.dynamicSecretLeases.delete({ params, body: scopeOf(scope) })).status).toBe(403);
    expect(
      (await viewer.client.dynamicSecrets.listLeases({ params: { name: secret.name }, query: scopeOf(scope) })).status,
    ).toBe(403);
    expect(
      (await scope.tenant.anonymous.dynamicSecrets.listLeases({ params: { name: secret.name }, query: scopeOf(scope) }))
        .status,
    ).toBe(401);
    expect(
      (await scope.tenant.admin.dynamicSecrets.listLeases({ params: { name: "missing" }, query: scopeOf(scope) }))
        .status,
    ).toBe(404);
  });

  it("keeps a lease whose revocation fails, with its status, unless forced", async () => {
    const scope = await createScope();
    const secret = await createSqlSecret(
      scope,
      {},
      { revocationStatement: `DROP ROLE "{{username}}"; SELECT no_such_function()` },
    );
    const { lease, data } = await leaseOf(scope, secret.name);
    const failed = expectOk(
      await scope.tenant.admin.dynamicSecretLeases.delete({ params: { leaseId: lease.id }, body: scopeOf(scope) }),
    ).lease;
    expect(failed).toMatchObject({
      id: lease.id,
      status: "Failed to delete",
      statusDetails: expect.stringContaining("no_such_function"),
    });
    expect(await canLogin(data.DB_USERNAME!, data.DB_PASSWORD!)).toBe(true);
    const listed = expectOk(
      await scope.tenant.admin.dynamicSecrets.listLeases({ params: { name: secret.name }, query: scopeOf(scope) }),
    );
    expect(listed.leases[0]).toMatchObject({ id: lease.id, status: "Failed to delete" });

    const forced = expectOk(
      await scope.tenant.admin.dynamicSecretLeases.delete({
        params: { leaseId: lease.id },
        body: { ...scopeOf(scope), isForced: true },
      }),
    ).lease;
    expect(forced.id).toBe(lease.id);
    expect(
      (await scope.tenant.admin.dynamicSecretLeases.get({ params: { leaseId: lease.id }, query: scopeOf(scope) }))
        .status,
    ).toBe(404);
  });

  it("treats revoking a credential that is already gone as success", async () => {
    const scope = await createScope();
    const secret = await createSqlSecret(scope, {}, { revocationStatement: `DROP ROLE "{{username}}"` });
    const { lease, data } = await leaseOf(scope, secret.name);
    await targetQuery(`drop role "${data.DB_USERNAME}"`);
    const res = await scope.tenant.admin.dynamicSecretLeases.delete({
      params: { leaseId: lease.id },
      body: scopeOf(scope),
    });
    expect(res.status).toBe(200);
    expect(expectOk(res).lease.status).toBeNull();
  });

  describe("revoking a lease while a renewal holds it (here or on another instance)", () => {
    /** What a renewal does around its provider call: claim the lease, later release it with the new expiry. */
    const holdAsRenewal = async (scope: LeaseScope, leaseId: string) => {
      const db = scope.tenant.app.deps.db;
      const token = randomUUID();
      expect(await claimLease(db, leaseId, token, 30, { onlyUnexpired: new Date() })).toBeDefined();
      return () => releaseRenewal(db, leaseId, token, new Date(Date.now() + 3_600_000));
    };

    it("revokes it as soon as the renewal lets go", async () => {
      const scope = await createScope();
      const secret = await createSqlSecret(scope);
      const { lease, data } = await leaseOf(scope, secret.name);
      const release = await holdAsRenewal(scope, lease.id);

      const deleting = scope.tenant.admin.dynamicSecretLeases.delete({
        params: { leaseId: lease.id },
        body: scopeOf(scope),
      });
      await new Promise((resolve) => setTimeout(resolve, 300));
      await release();

      expect(expectOk(await deleting).lease.id).toBe(lease.id);
      expect(await roleExists(data.DB_USERNAME!)).toBe(false);
      expect(
        (await scope.tenant.admin.dynamicSecretLeases.get({ params: { leaseId: lease.id }, query: scopeOf(scope) }))
          .status,
      ).toBe(404);
    });

    it("marks it when the renewal outlasts the wait: no further renewal, and the job revokes it once released", async () => {
      const scope = await createScope();
      const secret = await createSqlSecret(scope);
      const { lease, data } = await leaseOf(scope, secret.name);
      const release = await holdAsRenewal(scope, lease.id);

      const res = await scope.tenant.admin.dynamicSecretLeases.delete({
        params: { leaseId: lease.id },
        body: scopeOf(scope),
      });
      expect(expectOk(res).lease.id).toBe(lease.id);
      const db = scope.tenant.app.deps.db;
      expect(
        (
          await db
            .selectFrom("dynamic_secret_leases")
            .select("state")
            .where("id", "=", lease.id)
            .executeTakeFirstOrThrow()
        ).state,
      ).toBe("revoking");
      expect(await roleExists(data.DB_USERNAME!)).toBe(true);

      await release();
      const renew = await scope.tenant.admin.dynamicSecretLeases.renew({
        params: { leaseId: lease.id },
        body: scopeOf(scope),
      });
      expect(renew.status).toBe(404);

      await runRevocationPass(scope.tenant.app.deps);
      expect(await roleExists(data.DB_USERNAME!)).toBe(false);
      expect(await canLogin(data.DB_USERNAME!, data.DB_PASSWORD!)).toBe(false);
      expect(
        (await scope.tenant.admin.dynamicSecretLeases.get({ params: { leaseId: lease.id }, query: scopeOf(scope) }))
          .status,
      ).toBe(404);
    });
  });
});
