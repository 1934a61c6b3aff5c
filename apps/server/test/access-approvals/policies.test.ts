import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { createIdentity, createTenant, expectOk, uniqueName } from "../helpers/tenant";
import { createFixture, createPolicy, type Fixture } from "./helpers";

describe("access approval policies", () => {
  let f: Fixture;
  beforeAll(async () => {
    f = await createFixture();
  });
  const policies = () => f.tenant.admin.accessApprovalPolicies;

  it("creates with the defaults, reads, lists, counts, updates and archives", async () => {
    const created = await createPolicy(f);
    expect(created).toMatchObject({
      projectId: f.project.id,
      secretPath: "/",
      approvals: 1,
      enforcementLevel: "hard",
      allowedSelfApprovals: false,
      maxTimePeriod: null,
      requestExpirationTime: null,
      environment: { slug: "dev" },
      environments: [expect.objectContaining({ slug: "dev" })],
      bypassers: [],
      deletedAt: null,
    });
    expect(created.name).toMatch(/^dev-[a-z0-9]{3}$/);
    expect(created.approvers).toEqual(
      f.approvers.map((a) => ({ type: "identity", id: a.id, name: expect.any(String) as string })),
    );
    const params = { policyId: created.id };
    expect(expectOk(await policies().get({ params })).approval).toEqual(created);
    const listed = expectOk(await policies().list({ query: { projectSlug: f.project.slug } })).approvals;
    expect(listed.map((p) => p.id)).toContain(created.id);
    const counted = (envSlug: string) =>
      policies()
        .count({ query: { projectSlug: f.project.slug, envSlug } })
        .then((r) => expectOk(r).count);
    const before = await counted("staging");

    const named = uniqueName("policy");
    const updated = expectOk(
      await policies().update({
        params,
        body: {
          name: named,
          environments: ["dev", "staging"],
          secretPath: "/app/**",
          approvals: 2,
          enforcementLevel: "soft",
          bypassers: [{ type: "identity", id: f.approvers[0].id }],
          maxTimePeriod: "1h",
          requestExpirationTime: "2d",
        },
      }),
    ).approval;
    expect(updated).toMatchObject({
      name: named,
      secretPath: "/app/**",
      approvals: 2,
      enforcementLevel: "soft",
      maxTimePeriod: "1h",
      requestExpirationTime: "2d",
      bypassers: [expect.objectContaining({ type: "identity", id: f.approvers[0].id })],
    });
    expect(updated.environments.map((e) => e.slug).sort()).toEqual(["dev", "staging"]);
    expect(await counted("staging")).toBe(before + 1);
    // Omitted, the longest access stays; null removes it.
    expect(expectOk(await policies().update({ params, body: { approvals: 1 } })).approval.maxTimePeriod).toBe("1h");
    expect(expectOk(await policies().update({ params, body: { maxTimePeriod: null } })).approval.maxTimePeriod).toBe(
      null,
    );

    const archived = expectOk(await policies().delete({ params })).approval;
    expect(archived.deletedAt).not.toBeNull();
    expect((await policies().get({ params })).status).toBe(404);
    expect((await policies().update({ params, body: { approvals: 1 } })).status).toBe(404);
    expect((await policies().delete({ params })).status).toBe(404);
    const after = expectOk(await policies().list({ query: { projectSlug: f.project.slug } })).approvals;
    expect(after.map((p) => p.id)).not.toContain(created.id);
    // The archived row is kept for its requests.
    const row = await f.tenant.app.deps.db
      .selectFrom("access_approval_policies")
      .select("deleted_at")
      .where("id", "=", created.id)
      .executeTakeFirst();
    expect(row?.deleted_at).not.toBeNull();
  });

  it("takes approvers by username and group, and identities; a group lifts the approval count limit", async () => {
    const { group } = { group: expectOk(await f.tenant.admin.groups.create({ body: { name: uniqueName("group") } })) };
    expectOk(
      await f.tenant.admin.projectGroups.add({
        params: { projectId: f.project.id, groupIdOrName: group.id },
        body: {},
      }),
    );
    const policy = await createPolicy(f, {
      name: uniqueName("grouped"),
      approvers: [
        { type: "group", id: group.id },
        { type: "identity", id: f.approvers[0].id },
      ],
      approvals: 5,
    });
    expect(policy.approvers).toEqual([
      { type: "group", id: group.id, name: group.slug },
      expect.objectContaining({ type: "identity", id: f.approvers[0].id }),
    ]);
  });

  it("refuses more approvals than approvers, outsiders, unknown environments and taken names", async () => {
    const tooMany = await policies().create({
      body: {
        projectSlug: f.project.slug,
        environment: "dev",
        approvers: [{ type: "identity", id: f.approvers[0].id }],
        approvals: 2,
      },
    });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body).toMatchObject({
      message: "The number of approvals should be lower than the number of approvers.",
    });

    const outsider = await createIdentity(f.tenant);
    const notMember = await policies().create({
      body: { projectSlug: f.project.slug, environment: "dev", approvers: [{ type: "identity", id: outsider.id }] },
    });
    expect(notMember.status).toBe(400);
    expect(notMember.body).toMatchObject({ message: expect.stringContaining("must be members of the project") });
    const unknownUser = await policies().create({
      body: { projectSlug: f.project.slug, environment: "dev", approvers: [{ type: "user", username: "nobody" }] },
    });
    expect(unknownUser.status).toBe(400);
    const unknownGroup = await policies().create({
      body: { projectSlug: f.project.slug, environment: "dev", approvers: [{ type: "group", id: randomUUID() }] },
    });
    expect(unknownGroup.status).toBe(400);

    const noEnv = await policies().create({
      body: {
        projectSlug: f.project.slug,
        environment: "nowhere",
        approvers: [{ type: "identity", id: f.approvers[0].id }],
      },
    });
    expect(noEnv.status).toBe(404);
    const missingEnv = await policies().create({
      body: { projectSlug: f.project.slug, approvers: [{ type: "identity", id: f.approvers[0].id }] } as never,
    });
    expect(missingEnv.status).toBe(422);
    const badPath = await policies().create({
      body: {
        projectSlug: f.project.slug,
        environment: "dev",
        secretPath: "no-slash",
        approvers: [{ type: "identity", id: f.approvers[0].id }],
      },
    });
    expect(badPath.status).toBe(422);
    const badPeriod = await policies().create({
      body: {
        projectSlug: f.project.slug,
        environment: "dev",
        maxTimePeriod: "forever",
        approvers: [{ type: "identity", id: f.approvers[0].id }],
      },
    });
    expect(badPeriod.status).toBe(422);

    const name = uniqueName("taken");
    await createPolicy(f, { name });
    const taken = await policies().create({
      body: {
        projectSlug: f.project.slug,
        name,
        environment: "dev",
        approvers: [{ type: "identity", id: f.approvers[0].id }],
      },
    });
    expect(taken.status).toBe(400);
    const lowered = await createPolicy(f);
    const tooManyNow = await policies().update({ params: { policyId: lowered.id }, body: { approvals: 3 } });
    expect(tooManyNow.status).toBe(400);
  });

  it("needs the secret-approval rights, and hides another organization's policies", async () => {
    const policy = await createPolicy(f);
    const params = { policyId: policy.id };
    const noAccess = await createIdentity(f.tenant, { projectId: f.project.id, projectRole: "no-access" });
    expect((await noAccess.client.accessApprovalPolicies.list({ query: { projectSlug: f.project.slug } })).status).toBe(
      403,
    );
    expect((await noAccess.client.accessApprovalPolicies.get({ params })).status).toBe(403);
    // Viewers read policies, as Infisical's viewer does (read on secret-approval).
    const viewer = await createIdentity(f.tenant, { projectId: f.project.id, projectRole: "viewer" });
    expect((await viewer.client.accessApprovalPolicies.get({ params })).status).toBe(200);
    const member = await createIdentity(f.tenant, { projectId: f.project.id, projectRole: "member" });
    // Members read policies but do not write them.
    expect((await member.client.accessApprovalPolicies.get({ params })).status).toBe(200);
    const denied = await member.client.accessApprovalPolicies.create({
      body: {
        projectSlug: f.project.slug,
        environment: "dev",
        approvers: [{ type: "identity", id: f.approvers[0].id }],
      },
    });
    expect(denied.status).toBe(403);
    expect((await member.client.accessApprovalPolicies.update({ params, body: { approvals: 1 } })).status).toBe(403);
    expect((await member.client.accessApprovalPolicies.delete({ params })).status).toBe(403);
    const stranger = await createIdentity(f.tenant);
    expect((await stranger.client.accessApprovalPolicies.get({ params })).status).toBe(403);

    const other = await createTenant();
    expect((await other.admin.accessApprovalPolicies.get({ params })).status).toBe(404);
    expect((await other.admin.accessApprovalPolicies.update({ params, body: { approvals: 1 } })).status).toBe(404);
    expect((await other.admin.accessApprovalPolicies.delete({ params })).status).toBe(404);
    expect((await other.admin.accessApprovalPolicies.list({ query: { projectSlug: f.project.slug } })).status).toBe(
      404,
    );
    expect((await f.tenant.admin.accessApprovalPolicies.get({ params: { policyId: "not-an-id" } })).status).toBe(404);
    expect((await f.tenant.anonymous.accessApprovalPolicies.get({ params })).status).toBe(401);
  });
});
