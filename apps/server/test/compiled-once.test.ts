import { describe, expect, it } from "vitest";
import { compiledOnce } from "../src/db/compiled-once";
import { getTestApp } from "./helpers/app";
import { createTenant } from "./helpers/tenant";

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
});
