import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { runRevocationPass } from "../../src/modules/dynamic-secrets/revocation-pass";
import { canLogin, createScope, createSqlSecret, leaseOf } from "../dynamic-secrets/helpers";
import { auditEvents } from "./helpers";

describe("audit log: changes the platform makes itself", () => {
  it("records a lease the revocation job revoked at its expiry, in the project it belongs to", async () => {
    const scope = await createScope();
    const secret = await createSqlSecret(scope);
    const { lease, data } = await leaseOf(scope, secret.name);
    // Expire it now rather than waiting: the job picks up what is due.
    await sql`update dynamic_secret_leases set expire_at = now() - interval '1 second' where id = ${lease.id}`.execute(
      scope.tenant.app.deps.db,
    );
    await runRevocationPass(scope.tenant.app.deps);
    expect(await canLogin(String(data.DB_USERNAME), String(data.DB_PASSWORD))).toBe(false);

    const events = await auditEvents(scope.tenant, {
      projectId: scope.projectId,
      eventType: "revoke-dynamic-secret-lease",
    });
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      orgId: scope.tenant.orgId,
      projectId: scope.projectId,
      actor: { type: "platform" },
      event: {
        metadata: { leaseId: lease.id, dynamicSecretName: secret.name, environment: "dev", reason: "expired" },
      },
    });
    const created = await auditEvents(scope.tenant, {
      projectId: scope.projectId,
      eventType: "create-dynamic-secret-lease",
    });
    expect(created).toHaveLength(1);
    expect(JSON.stringify([...events, ...created])).not.toContain(String(data.DB_PASSWORD));
  });
});
