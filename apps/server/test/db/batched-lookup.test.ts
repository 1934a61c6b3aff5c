import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { batchedLookup } from "../../src/db/batched-lookup";
import type { Database } from "../../src/db/database";
import { getTestApp } from "../helpers/app";
import { createTenant } from "../helpers/tenant";

type OrgRow = { id: string; name: string };

/** Organizations by id from the real test database, recording the keys of every query sent. */
const orgLookup = (maxBatch?: number) => {
  const queries: string[][] = [];
  const lookup = batchedLookup(
    async (db: Database, ids: string[]) => {
      queries.push(ids);
      return (await sql<OrgRow>`select id, name from organizations where id = any(${ids}::uuid[])`.execute(db)).rows;
    },
    (row) => row.id,
    maxBatch,
  );
  return { lookup, queries };
};

const MISSING = "00000000-0000-4000-8000-000000000000";

describe("batchedLookup", () => {
  it("answers every lookup of one event-loop turn from one query, each with its own row", async () => {
    const { deps } = await getTestApp();
    const [a, b, c] = await Promise.all([createTenant(), createTenant(), createTenant()]);
    const { lookup, queries } = orgLookup();

    const rows = await Promise.all([a, b, c, a].map((t) => lookup(deps.db, t.orgId)).concat(lookup(deps.db, MISSING)));

    expect(queries).toHaveLength(1);
    expect([...queries[0]!].sort()).toEqual([a.orgId, b.orgId, c.orgId, MISSING].sort());
    expect(rows.map((row) => row?.id)).toEqual([a.orgId, b.orgId, c.orgId, a.orgId, undefined]);
  });

  it("sends lookups of later turns in later queries, so each sees writes committed before it", async () => {
    const { deps } = await getTestApp();
    const tenant = await createTenant();
    const { lookup, queries } = orgLookup();

    expect((await lookup(deps.db, tenant.orgId))?.name).not.toBe("renamed-between-turns");
    await deps.db
      .updateTable("organizations")
      .set({ name: "renamed-between-turns" })
      .where("id", "=", tenant.orgId)
      .execute();
    expect((await lookup(deps.db, tenant.orgId))?.name).toBe("renamed-between-turns");
    expect(queries).toHaveLength(2);
  });

  it("splits a turn's lookups into batches of at most maxBatch keys", async () => {
    const { deps } = await getTestApp();
    const tenants = await Promise.all(Array.from({ length: 5 }, () => createTenant()));
    const { lookup, queries } = orgLookup(2);

    const rows = await Promise.all(tenants.map((t) => lookup(deps.db, t.orgId)));

    expect(rows.map((row) => row?.id)).toEqual(tenants.map((t) => t.orgId));
    expect(queries.map((keys) => keys.length)).toEqual([2, 2, 1]);
  });

  it("rejects every lookup of a failed batch and serves the next batch normally", async () => {
    const { deps } = await getTestApp();
    const tenant = await createTenant();
    const { lookup } = orgLookup();

    const failed = await Promise.allSettled([lookup(deps.db, tenant.orgId), lookup(deps.db, "not-a-uuid")]);
    expect(failed.map((r) => r.status)).toEqual(["rejected", "rejected"]);

    expect((await lookup(deps.db, tenant.orgId))?.id).toBe(tenant.orgId);
  });
});
