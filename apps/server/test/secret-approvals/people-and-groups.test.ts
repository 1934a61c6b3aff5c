import { beforeAll, describe, expect, it } from "vitest";
import { configureSso, signIn } from "../sso/sso-helpers";
import { propose } from "./helpers";
import { createIdentity, createProject, createTenant, expectOk, uniqueName, type Tenant } from "../helpers/tenant";

let tenant: Tenant;
beforeAll(async () => {
  tenant = await createTenant();
  await configureSso(tenant);
});

/** A person of the organization, signed in through the OpenID provider, and a member of the project. */
const personIn = async (projectId: string) => {
  const email = `${uniqueName("reviewer")}@example.test`;
  const session = await signIn(tenant, { sub: `sub-${email}`, email });
  const { user } = expectOk(await session.client.users.me());
  expectOk(await tenant.admin.users.inviteProjectMembers({ params: { projectId }, body: { emails: [email] } }));
  return { ...session, user, email };
};

describe("people and groups as approvers", () => {
  it("a person named by user name reviews and merges a machine's request, seeing its value", async () => {
    const { id: projectId } = await createProject(tenant);
    const person = await personIn(projectId);
    const committer = await createIdentity(tenant, { projectId, projectRole: "member" });
    const policy = expectOk(
      await tenant.admin.secretApprovalPolicies.create({
        body: {
          projectId,
          environment: "dev",
          secretPath: "/",
          approvers: [{ type: "user", username: person.user.username }],
        } as never,
      }),
    ).approval;
    expect(policy.approvers).toEqual([{ type: "user", id: person.user.id, name: person.user.username }]);
    const request = await propose({ projectId }, committer, "FROM_MACHINE", "from-a-machine");
    const waiting = expectOk(
      await person.client.secretApprovalRequests.list({ query: { projectId, reviewable: "true" } }),
    );
    expect(waiting.approvals).toMatchObject([
      { id: request.id, committerIdentityId: committer.id, commits: [{ secretValue: "from-a-machine" }] },
    ]);
    const review = expectOk(
      await person.client.secretApprovalRequests.review({
        params: { requestId: request.id },
        body: { status: "approved" },
      }),
    ).review;
    expect(review).toMatchObject({ reviewerUserId: person.user.id, reviewerIdentityId: null });
    expectOk(await person.client.secretApprovalRequests.merge({ params: { requestId: request.id }, body: {} }));
    const read = expectOk(
      await tenant.admin.secretsV4.get({
        params: { secretName: "FROM_MACHINE" },
        query: { projectId, environment: "dev", secretPath: "/" },
      }),
    );
    expect(read.secret.secretValue).toBe("from-a-machine");
  });

  it("an unknown user name is refused; members of an approving group review, others may not", async () => {
    const { id: projectId } = await createProject(tenant);
    const refused = await tenant.admin.secretApprovalPolicies.create({
      body: {
        projectId,
        environment: "dev",
        secretPath: "/",
        approvers: [{ type: "user", username: "nobody" }],
      } as never,
    });
    expect(refused.body).toMatchObject({ statusCode: 400, message: "Invalid approver user: nobody" });

    const group = expectOk(await tenant.admin.groups.create({ body: { name: uniqueName("reviewers") } }));
    const inGroup = await createIdentity(tenant);
    expectOk(await tenant.admin.groups.addIdentity({ params: { id: group.id, machineIdentityId: inGroup.id } }));
    expectOk(
      await tenant.admin.projectGroups.add({
        params: { projectId, groupIdOrName: group.id },
        body: { role: "viewer" },
      }),
    );
    const committer = await createIdentity(tenant, { projectId, projectRole: "member" });
    const bystander = await createIdentity(tenant, { projectId, projectRole: "member" });
    expectOk(
      await tenant.admin.secretApprovalPolicies.create({
        body: {
          projectId,
          environment: "dev",
          secretPath: "/",
          approvers: [{ type: "group", id: group.id }],
          approvals: 1,
        } as never,
      }),
    );
    const request = await propose({ projectId }, committer, "VIA_GROUP", "from-a-machine");
    const byBystander = await bystander.client.secretApprovalRequests.review({
      params: { requestId: request.id },
      body: { status: "approved" },
    });
    expect(byBystander.status).toBe(403);
    expectOk(
      await inGroup.client.secretApprovalRequests.review({
        params: { requestId: request.id },
        body: { status: "approved" },
      }),
    );
    expectOk(await committer.client.secretApprovalRequests.merge({ params: { requestId: request.id }, body: {} }));
  });
});
