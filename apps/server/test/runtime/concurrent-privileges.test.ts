import { describe, expect, it } from "vitest";
import { getTestApp } from "../helpers/app";
import { createIdentity, createProject, createTenant } from "../helpers/tenant";
import { sameDatabaseInstance } from "./instances";

const WRITERS = 24;
const CREATES_EACH = 8;

describe("concurrent privilege creates in one project", () => {
  it("never conflict when they concern different identities, from two instances", async () => {
    const app = await getTestApp();
    const tenant = await createTenant(app);
    const project = await createProject(tenant);
    const members = [];
    for (let i = 0; i < WRITERS; i++) members.push(await createIdentity(tenant, { projectId: project.id }));
    const other = await sameDatabaseInstance(app);
    try {
      const clients = [app.client(tenant.adminToken), other.client(tenant.adminToken)];
      const statuses: number[] = [];
      await Promise.all(
        members.map(async (member, i) => {
          const v2 = clients[i % 2]!.privileges.v2;
          for (let n = 0; n < CREATES_EACH; n++) {
            const res = await v2.create({
              body: {
                identityId: member.id,
                projectId: project.id,
                permissions: [{ subject: "secrets", action: ["read"] }],
                type: { isTemporary: false },
              },
            });
            statuses.push(res.status);
          }
        }),
      );
      expect(statuses.filter((status) => status !== 200)).toEqual([]);
      expect(statuses).toHaveLength(WRITERS * CREATES_EACH);
    } finally {
      await other.close();
    }
  }, 120_000);
});
