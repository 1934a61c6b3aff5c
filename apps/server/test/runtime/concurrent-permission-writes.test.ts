import { describe, expect, it } from "vitest";
import type { KeywardClient } from "@keyward/client";
import { openDatabase } from "../../src/db/database";
import type { Tx } from "../../src/db/transaction";
import { bumpPermissionVersion, bumpPermissionVersionForGroup } from "../../src/modules/authz/permission-version";
import { getTestApp } from "../helpers/app";
import { createProject, createTenant, expectOk, uniqueName } from "../helpers/tenant";
import { sameDatabaseInstance } from "./instances";

/** Writes in flight at once, over all the jobs below (about 150 writes in all). */
const IN_FLIGHT = 24;
const MEMBERS = 6;

const LEGACY = (n: number) => ({
  actions: ["read" as const],
  subject: "secrets" as const,
  conditions: { environment: "dev", secretPath: { $glob: `/v1-${n}/**` } },
});

type Answer = { status: number; body: unknown };
/** One write; `api` is the instance it goes to. */
type Step = (api: KeywardClient) => Promise<Answer>;

const RULE = (n: number) => [
  { subject: "secrets" as const, action: ["describeSecret" as const], conditions: { secretPath: `/w-${n}` } },
];

describe("concurrent writes that change permissions in one project", () => {
  it("all apply, none answers 409, from two instances on one database", async () => {
    const app = await getTestApp();
    const other = await sameDatabaseInstance(app);
    const tenant = await createTenant(app);
    const project = await createProject(tenant);
    const admin = tenant.admin;
    const newIdentity = async () =>
      expectOk(
        await admin.identities.create({
          body: { name: uniqueName("writer"), organizationId: tenant.orgId, role: "no-access" },
        }),
      ).identity.id;
    const members: string[] = [];
    const outsiders: string[] = [];
    for (let i = 0; i < MEMBERS; i++) {
      const id = await newIdentity();
      expectOk(
        await admin.projects.addIdentityMembership({
          params: { projectId: project.id, identityId: id },
          body: { role: "viewer" },
        }),
      );
      members.push(id);
      outsiders.push(await newIdentity());
    }
    const group = expectOk(await admin.groups.create({ body: { name: uniqueName("in-project") } }));
    expectOk(
      await admin.projectGroups.add({
        params: { projectId: project.id, groupIdOrName: group.id },
        body: { role: "viewer" },
      }),
    );
    const visitors = [];
    for (let i = 0; i < 3; i++)
      visitors.push(expectOk(await admin.groups.create({ body: { name: uniqueName("visitor") } })));
    const lookup = (identityId: string) => ({ identityId, projectSlug: project.slug });

    const jobs: Step[][] = [];
    const v2Ids = new Map<number, string>();
    for (let k = 0; k < 12; k++) {
      const identityId = members[k % MEMBERS]!;
      const job: Step[] = [
        async (api) => {
          const res = await api.privileges.v2.create({
            body: {
              identityId,
              projectId: project.id,
              slug: `v2-${k}`,
              permissions: RULE(k),
              type: { isTemporary: false },
            },
          });
          if (res.status === 200) v2Ids.set(k, res.body.privilege.id);
          return res;
        },
        (api) =>
          api.privileges.v2.update({
            params: { id: v2Ids.get(k)! },
            body: { slug: `v2-${k}-b`, permissions: RULE(k + 100), type: { isTemporary: false } },
          }),
      ];
      if (k % 2 === 1) job.push((api) => api.privileges.v2.delete({ params: { id: v2Ids.get(k)! } }));
      jobs.push(job);
    }
    for (let k = 0; k < 12; k++) {
      const keys = lookup(members[k % MEMBERS]!);
      const job: Step[] = [
        (api) =>
          api.privileges.v1.createPermanent({
            body: { ...keys, slug: `v1-${k}`, privilegePermission: LEGACY(k) },
          }),
        (api) =>
          api.privileges.v1.update({
            body: {
              ...keys,
              privilegeSlug: `v1-${k}`,
              privilegeDetails: { slug: `v1-${k}-b`, privilegePermission: LEGACY(k + 100) },
            },
          }),
      ];
      if (k % 2 === 1) job.push((api) => api.privileges.v1.delete({ body: { ...keys, privilegeSlug: `v1-${k}-b` } }));
      jobs.push(job);
    }
    const membership = (identityId: string) => ({ projectId: project.id, identityId });
    for (let i = 0; i < MEMBERS; i++) {
      jobs.push([
        (api) =>
          api.projects.updateIdentityMembership({
            params: membership(members[i]!),
            body: { roles: [{ role: "member" }] },
          }),
        (api) =>
          api.projects.updateIdentityMembership({
            params: membership(members[i]!),
            body: { roles: [{ role: "viewer" }] },
          }),
      ]);
      jobs.push([
        (api) => api.projects.addIdentityMembership({ params: membership(outsiders[i]!), body: { role: "viewer" } }),
        (api) =>
          api.projects.updateIdentityMembership({
            params: membership(outsiders[i]!),
            body: { roles: [{ role: "member" }] },
          }),
        (api) => api.projects.deleteIdentityMembership({ params: membership(outsiders[i]!) }),
      ]);
      let roleId = "";
      jobs.push([
        async (api) => {
          const res = await api.roles.create({
            params: { projectId: project.id },
            body: { slug: `role-${i}`, name: `Role ${i}`, permissions: RULE(i) },
          });
          if (res.status === 200) roleId = res.body.role.id;
          return res;
        },
        (api) => api.roles.update({ params: { projectId: project.id, roleId }, body: { permissions: RULE(i + 100) } }),
        (api) => api.roles.delete({ params: { projectId: project.id, roleId } }),
      ]);
      jobs.push([
        (api) => api.groups.addIdentity({ params: { id: group.id, machineIdentityId: members[i]! } }),
        (api) => api.groups.removeIdentity({ params: { id: group.id, machineIdentityId: members[i]! } }),
      ]);
      jobs.push([
        (api) => api.identities.update({ params: { identityId: members[i]! }, body: { name: `renamed-${i}` } }),
      ]);
    }
    for (const visitor of visitors) {
      jobs.push([
        (api) =>
          api.projectGroups.add({
            params: { projectId: project.id, groupIdOrName: visitor.id },
            body: { role: "viewer" },
          }),
        (api) =>
          api.projectGroups.update({
            params: { projectId: project.id, groupId: visitor.id },
            body: { roles: [{ role: "member" }] },
          }),
        (api) => api.projectGroups.remove({ params: { projectId: project.id, groupId: visitor.id } }),
      ]);
      let identityId = "";
      jobs.push([
        async (api) => {
          const res = await api.projectIdentities.create({
            params: { projectId: project.id },
            body: { name: uniqueName("owned") },
          });
          if (res.status === 200) identityId = res.body.identity.id;
          return res;
        },
        (api) =>
          api.projectIdentities.update({
            params: { projectId: project.id, identityId },
            body: { name: `owned-${visitor.slug}` },
          }),
      ]);
    }

    const apis = [app.client(tenant.adminToken), other.client(tenant.adminToken)];
    const refused: string[] = [];
    let writes = 0;
    try {
      // Jobs interleave (an order where each kind meets the others); a job's own steps run in order.
      const queue = jobs.map((job, i) => ({ job, key: (i * 7919) % jobs.length })).sort((a, b) => a.key - b.key);
      await Promise.all(
        Array.from({ length: IN_FLIGHT }, async () => {
          for (let next = queue.shift(); next; next = queue.shift()) {
            for (const step of next.job) {
              const res = await step(apis[writes++ % apis.length]!);
              if (res.status !== 200) refused.push(`${res.status} ${JSON.stringify(res.body)}`);
            }
          }
        }),
      );
    } finally {
      await other.close();
    }
    expect(refused).toEqual([]);
    expect(writes).toBeGreaterThanOrEqual(140);

    // Every write applied: the survivors carry their updates, the deleted are gone.
    for (let i = 0; i < MEMBERS; i++) {
      const v2 = expectOk(
        await admin.privileges.v2.list({ query: { identityId: members[i]!, projectId: project.id } }),
      );
      const v1 = expectOk(await admin.privileges.v1.list({ query: lookup(members[i]!) }));
      const expected = (prefix: string) =>
        [i, i + MEMBERS]
          .filter((k) => k % 2 === 0)
          .map((k) => `${prefix}-${k}-b`)
          .sort();
      expect(
        v2.privileges
          .map((p) => p.slug)
          .filter((slug) => slug.startsWith("v2-"))
          .sort(),
      ).toEqual(expected("v2"));
      expect(
        v1.privileges
          .map((p) => p.slug)
          .filter((slug) => slug.startsWith("v1-"))
          .sort(),
      ).toEqual(expected("v1"));
      const roles = expectOk(
        await admin.projects.getIdentityMembership({ params: membership(members[i]!) }),
      ).identityMembership.roles.map((r) => r.role);
      expect(roles).toEqual(["viewer"]);
      expect((await admin.projects.getIdentityMembership({ params: membership(outsiders[i]!) })).status).not.toBe(200);
      expect(expectOk(await admin.identities.get({ params: { identityId: members[i]! } })).identity.name).toBe(
        `renamed-${i}`,
      );
    }
    const roles = expectOk(await admin.roles.list({ params: { projectId: project.id } })).roles;
    expect(roles.filter((role) => role.slug.startsWith("role-"))).toEqual([]);
    const inGroup = expectOk(
      await admin.groups.listIdentities({ params: { id: group.id }, query: { filter: "existingMembers" } }),
    );
    expect(inGroup.totalCount).toBe(0);
    const groups = expectOk(await admin.projectGroups.list({ params: { projectId: project.id } })).groupMemberships;
    expect(groups.map((g) => g.groupId)).toEqual([group.id]);
    const owned = expectOk(
      await admin.projectIdentities.list({ params: { projectId: project.id }, query: { search: "owned-" } }),
    ).identities;
    expect(owned.map((identity) => identity.name).sort()).toEqual(visitors.map((v) => `owned-${v.slug}`).sort());
  }, 60_000);

  it("bumps of one project never deadlock each other beside inserts referencing it (PostgreSQL, without retries)", async (ctx) => {
    const app = await getTestApp();
    // On PGlite transactions run one at a time: nothing to meet.
    if (!app.deps.env.DATABASE_URL) return ctx.skip();
    const tenant = await createTenant(app);
    const project = await createProject(tenant);
    const group = expectOk(await tenant.admin.groups.create({ body: { name: uniqueName("bumped") } }));
    expectOk(
      await tenant.admin.projectGroups.add({
        params: { projectId: project.id, groupIdOrName: group.id },
        body: { role: "viewer" },
      }),
    );
    // Transactions opened directly, not through inTransaction: a deadlock would surface, not be retried.
    const { db, close } = await openDatabase({ databaseUrl: app.deps.env.DATABASE_URL, poolSize: IN_FLIGHT });
    const failures: unknown[] = [];
    const until = Date.now() + 3_000;
    const loop = (body: (trx: Tx) => Promise<unknown>) => async () => {
      while (Date.now() < until)
        await db
          .transaction()
          .execute(body)
          .catch((error: unknown) => failures.push(error));
    };
    // A foreign key check on an insert that references the project takes this lock.
    const referencing = async (trx: Tx) => {
      await trx.selectFrom("projects").select("id").where("id", "=", project.id).forKeyShare().execute();
      await trx.selectFrom("projects").select("permission_version").where("id", "=", project.id).execute();
    };
    try {
      await Promise.all(
        [
          ...Array.from({ length: 12 }, () => loop((trx) => bumpPermissionVersion(trx, [project.id]))),
          ...Array.from({ length: 4 }, () => loop((trx) => bumpPermissionVersionForGroup(trx, group.id))),
          ...Array.from({ length: IN_FLIGHT - 16 }, () => loop(referencing)),
        ].map((run) => run()),
      );
    } finally {
      await close();
    }
    expect(failures).toEqual([]);
  }, 30_000);
});
