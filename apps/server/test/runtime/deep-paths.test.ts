import { describe, expect, it } from "vitest";
import { createIdentity, createProject, createTenant, expectOk } from "../helpers/tenant";

const DEPTH = 255;

describe("deep folder paths under concurrent readers", () => {
  it("answers a 255-segment path in one query, so an unrelated request never waits behind the readers", async () => {
    const tenant = await createTenant();
    const project = await createProject(tenant);
    // One-letter names: 255 segments just fit the 512-character path bound.
    const segments = Array.from({ length: DEPTH }, () => "a");
    const parent = `/${segments.slice(0, -1).join("/")}`;
    expectOk(
      await tenant.admin.folders.create({
        body: { projectId: project.id, environment: "dev", path: parent, name: segments[DEPTH - 1]! },
      }),
    );
    const deep = `/${segments.join("/")}`;
    const first = expectOk(
      await tenant.admin.folders.list({ query: { projectId: project.id, environment: "dev", path: parent } }),
    );
    expect(first.folders.map((f) => f.name)).toEqual([segments[DEPTH - 1]]);
    const probe = await createIdentity(tenant, { orgRole: "admin" });
    expectOk(await probe.client.identities.get({ params: { identityId: probe.id } }));

    let stop = false;
    let reads = 0;
    const reader = async () => {
      while (!stop) {
        const res = await tenant.admin.folders.list({
          query: { projectId: project.id, environment: "dev", path: deep },
        });
        expect(res.status).toBe(200);
        reads += 1;
      }
    };
    const readers = Array.from({ length: 32 }, reader);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const waits: number[] = [];
    const until = Date.now() + 3_000;
    while (Date.now() < until) {
      const started = performance.now();
      expectOk(await probe.client.identities.get({ params: { identityId: probe.id } }));
      waits.push(performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    stop = true;
    await Promise.all(readers);
    const worst = Math.max(...waits);
    expect(reads).toBeGreaterThan(32);
    // Seconds-long waits came from 255 queued round trips per read (one per segment); with the walk in
    // one statement a request waits for at most one query per reader (~0.1-0.6 s here, on a loaded box).
    expect(worst).toBeLessThan(2_000);
  }, 60_000);
});
