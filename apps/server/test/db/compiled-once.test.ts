import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { compiledOnce } from "../../src/db/compiled-once";
import { inTransaction } from "../../src/db/transaction";
import { getTestApp } from "../helpers/app";
import { createTenant } from "../helpers/tenant";

describe("compiledOnce", () => {
  it("runs the compiled query with each call's own parameters", async () => {
    const app = await getTestApp();
    const a = await createTenant();
    const b = await createTenant();
    const findOrg = compiledOnce((db, id: string, slugPattern: string) =>
      db.selectFrom("organizations").select(["id", "slug"]).where("id", "=", id).where("slug", "like", slugPattern),
    );
    expect((await findOrg(app.deps.db, a.orgId, "%"))[0]?.id).toBe(a.orgId);
    expect((await findOrg(app.deps.db, b.orgId, "%"))[0]?.id).toBe(b.orgId);
    expect(await findOrg(app.deps.db, a.orgId, "no-such-slug")).toEqual([]);
  });

  // PostgreSQL re-plans an array-keyed lookup on every execution unless told to keep its plan.
  it("keeps a generic plan on PostgreSQL, leaving other statements and transactions to PostgreSQL's choice", async () => {
    const app = await getTestApp();
    const { orgId } = await createTenant();
    const planMode = compiledOnce((db, ids: string[]) =>
      db
        .selectFrom("organizations")
        .select([sql<string>`current_setting('plan_cache_mode')`.as("mode"), "id"])
        .where(sql<boolean>`id = any(${ids}::uuid[])`),
    );
    const otherStatement = async () =>
      (await sql<{ mode: string }>`select current_setting('plan_cache_mode') as mode`.execute(app.deps.db)).rows[0]!
        .mode;
    const kept = app.handle.kind === "postgres" ? "force_generic_plan" : "auto";
    for (let i = 0; i < 3; i += 1) {
      expect((await planMode(app.deps.db, [orgId]))[0]).toEqual({ mode: kept, id: orgId });
      expect(await otherStatement()).toBe("auto");
    }
    // Inside a transaction the lookup runs on the transaction's connection and sees its writes.
    const findName = compiledOnce((db, id: string) =>
      db.selectFrom("organizations").select(["name"]).where("id", "=", id),
    );
    const rolledBack = inTransaction(app.deps.db, async (trx) => {
      await trx.updateTable("organizations").set({ name: "renamed in transaction" }).where("id", "=", orgId).execute();
      expect(await findName(trx, orgId)).toEqual([{ name: "renamed in transaction" }]);
      expect((await planMode(trx, [orgId]))[0]?.mode).toBe("auto");
      throw new Error("roll back");
    });
    await expect(rolledBack).rejects.toThrow("roll back");
    expect(await findName(app.deps.db, orgId)).not.toEqual([{ name: "renamed in transaction" }]);
  });
});
