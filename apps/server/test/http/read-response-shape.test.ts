import { contract } from "@keyward/contract";
import { describe, expect, it } from "vitest";
import { expectOk } from "../helpers/tenant";
import { grant, projectWithMember } from "../permissions/helpers";

/**
 * The privilege and identity reads skip ts-rest's response parsing (src/http/json-response.ts), so
 * their bodies must be exactly what the contract declares: parsing one with the route's own schema
 * may neither drop a key nor change a value.
 */
describe("hot read responses", () => {
  it("a privilege read carries exactly the declared keys, conditions and timing included", async () => {
    const { tenant, project, member } = await projectWithMember();
    const privilege = await grant(
      tenant,
      project.id,
      member,
      [
        {
          subject: "secrets",
          action: ["describeSecret", "readValue"],
          conditions: { environment: "dev", secretPath: { $glob: "/app/**" }, secretName: { $in: ["A", "B"] } },
        },
        { subject: "identity", action: ["read"], inverted: true, conditions: { identityId: member.id } },
      ],
      {
        isTemporary: true,
        temporaryMode: "relative",
        temporaryRange: "1h",
        temporaryAccessStartTime: new Date().toISOString(),
      },
    );
    const res = await tenant.admin.privileges.v2.get({ params: { id: privilege.id } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(contract.privileges.v2.get.responses[200].parse(res.body)).toStrictEqual(res.body);
    expect(res.body).toMatchObject({ privilege: { id: privilege.id, isTemporary: true, temporaryRange: "1h" } });
  });

  it("an identity read (organization and project routes) carries exactly the declared keys", async () => {
    const { tenant, project, member } = await projectWithMember();
    expectOk(
      await tenant.admin.identities.update({
        params: { identityId: member.id },
        body: { metadata: [{ key: "team", value: "payments" }] },
      }),
    );
    const org = await tenant.admin.identities.get({ params: { identityId: member.id } });
    expect(org.status).toBe(200);
    expect(contract.identities.get.responses[200].parse(org.body)).toStrictEqual(org.body);
    expect(org.body).toMatchObject({ identity: { id: member.id, authMethods: ["token-auth"] } });

    const { identity: scoped } = expectOk(
      await tenant.admin.projectIdentities.create({
        params: { projectId: project.id },
        body: { name: "scoped", metadata: [{ key: "owner", value: "ci" }] },
      }),
    );
    const inProject = await tenant.admin.projectIdentities.get({
      params: { projectId: project.id, identityId: scoped.id },
    });
    expect(inProject.status).toBe(200);
    expect(inProject.body).toMatchObject({ identity: { id: scoped.id, projectId: project.id } });
    expect(contract.projectIdentities.get.responses[200].parse(inProject.body)).toStrictEqual(inProject.body);
  });
});
