import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { inTransaction } from "../../src/db/transaction";
import { upsertInvitation } from "../../src/modules/users/org-membership.repository";
import { getTestApp } from "../helpers/app";
import { createTenant } from "../helpers/tenant";

/**
 * Named statements may run on a generic plan (PostgreSQL picks one after a few executions): a statement
 * must not depend on its parameters' values to be valid. An `on conflict` arbiter that is a partial
 * unique index is matched by proving the statement's predicate implies the index's, which a parameter
 * cannot do once the plan is generic ("no unique or exclusion constraint matching").
 */
describe("statements valid on a generic plan", () => {
  it("re-inviting an address updates its invitation under a forced generic plan", async () => {
    const { deps } = await getTestApp();
    const tenant = await createTenant();
    const invite = (role: string) =>
      inTransaction(deps.db, async (trx) => {
        await sql`set local plan_cache_mode = force_generic_plan`.execute(trx);
        const values = {
          orgId: tenant.orgId,
          email: "Generic@Example.test",
          role,
          expiresAt: new Date(),
          projectIds: [],
        };
        return upsertInvitation(trx, values);
      });
    const first = await invite("member");
    const again = await invite("admin");
    expect(again.id).toBe(first.id);
    const { rows } = await sql<{ role: string }>`
      select role from org_user_memberships where id = ${first.id}`.execute(deps.db);
    expect(rows).toEqual([{ role: "admin" }]);
  });
});
