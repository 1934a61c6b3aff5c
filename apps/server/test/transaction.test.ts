import { describe, expect, it } from "vitest";
import { migrationProvider } from "../src/db/migrations";
import { afterCommit, inTransaction } from "../src/db/transaction";
import { getTestApp } from "./helpers/app";
import { createTenant, uniqueName } from "./helpers/tenant";

describe("inTransaction and afterCommit", () => {
  it("runs side effects once the change is committed, and never for a rolled-back one", async () => {
    const { deps } = await getTestApp();
    const tenant = await createTenant();
    const seen: string[] = [];
    const committed = uniqueName("committed");
    await inTransaction(deps.db, async (trx) => {
      await trx.updateTable("organizations").set({ name: committed }).where("id", "=", tenant.orgId).execute();
      afterCommit(trx, () => seen.push("committed"));
      expect(seen).toEqual([]);
    });
    expect(seen).toEqual(["committed"]);

    await expect(
      inTransaction(deps.db, async (trx) => {
        await trx.updateTable("organizations").set({ name: "rolled-back" }).where("id", "=", tenant.orgId).execute();
        afterCommit(trx, () => seen.push("rolled back"));
        throw new Error("abort");
      }),
    ).rejects.toThrow("abort");
    expect(seen).toEqual(["committed"]);
    const org = await deps.db
      .selectFrom("organizations")
      .select("name")
      .where("id", "=", tenant.orgId)
      .executeTakeFirst();
    expect(org?.name).toBe(committed);
  });

  it("refuses afterCommit on a transaction it did not open", async () => {
    const { deps } = await getTestApp();
    await expect(deps.db.transaction().execute(async (trx) => afterCommit(trx, () => undefined))).rejects.toThrow(
      /inTransaction/,
    );
  });
});

describe("migration registry", () => {
  it("lists migrations in the order they run", async () => {
    const names = Object.keys(await migrationProvider.getMigrations());
    expect(names).toEqual([...names].sort());
  });
});
