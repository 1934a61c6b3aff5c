import { beforeAll, describe, expect, it } from "vitest";
import { createIdentity, createProject, createTenant, expectOk, type Tenant } from "../helpers/tenant";
import { configureSso, signedInPerson } from "../sso/sso-helpers";

describe("SSH host groups", () => {
  let tenant: Tenant;
  let projectId: string;
  let person: Awaited<ReturnType<typeof signedInPerson>>;

  beforeAll(async () => {
    tenant = await createTenant();
    projectId = (await createProject(tenant, "ssh")).id;
    await configureSso(tenant);
    person = await signedInPerson(tenant);
    expectOk(
      await tenant.admin.users.inviteProjectMembers({ params: { projectId }, body: { emails: [person.email] } }),
    );
  });

  const host = async (hostname: string) =>
    expectOk(await tenant.admin.ssh.createHost({ body: { projectId, hostname } }));

  it("shares a group's login mappings with its hosts, for listing and for people's certificates", async () => {
    const group = expectOk(
      await tenant.admin.ssh.createHostGroup({
        body: {
          projectId,
          name: "web",
          loginMappings: [{ loginUser: "deploy", allowedPrincipals: { usernames: [person.user.username] } }],
        },
      }),
    );
    expect(group.loginMappings).toEqual([
      { loginUser: "deploy", allowedPrincipals: { usernames: [person.user.username], groups: [] } },
    ]);
    const duplicate = await tenant.admin.ssh.createHostGroup({ body: { projectId, name: "web" } });
    expect(duplicate).toMatchObject({ status: 400, body: { message: "SSH host group with name web already exists" } });
    const [a, b] = [await host("a.example.test"), await host("b.example.test")];
    const issue = () => person.client.ssh.issueUserCert({ params: { sshHostId: a.id }, body: { loginUser: "deploy" } });
    expect((await issue()).status).toBe(401);

    const params = { sshHostGroupId: group.id, sshHostId: a.id };
    const added = expectOk(await tenant.admin.ssh.addHostToGroup({ params, body: {} }));
    expect(added.loginMappings).toEqual([
      {
        loginUser: "deploy",
        allowedPrincipals: { usernames: [person.user.username], groups: [] },
        source: "hostGroup",
      },
    ]);
    expect((await tenant.admin.ssh.addHostToGroup({ params, body: {} })).status).toBe(400);
    expect((await issue()).status).toBe(200);
    const mine = expectOk(await person.client.ssh.loginHosts());
    expect(mine.map((h) => [h.hostname, h.loginMappings.map((m) => m.source)])).toEqual([
      ["a.example.test", ["hostGroup"]],
    ]);

    const members = (filter?: "group-members" | "non-group-members") =>
      tenant.admin.ssh.hostGroupHosts({ params: { sshHostGroupId: group.id }, query: { filter } });
    const all = expectOk(await members());
    expect(all.totalCount).toBe(2);
    expect(all.hosts.map((h) => [h.hostname, h.isPartOfGroup])).toEqual([
      ["a.example.test", true],
      ["b.example.test", false],
    ]);
    expect(all.hosts[0]!.joinedGroupAt).toMatch(/^\d{4}-/);
    expect(expectOk(await members("non-group-members")).hosts.map((h) => h.id)).toEqual([b.id]);
    const listed = expectOk(await tenant.admin.ssh.projectHostGroups({ params: { projectId } })).groups;
    expect(listed.map((g) => [g.name, g.hostCount])).toEqual([["web", 1]]);

    const renamed = expectOk(
      await tenant.admin.ssh.updateHostGroup({
        params: { sshHostGroupId: group.id },
        body: { name: "front", loginMappings: [{ loginUser: "ops", allowedPrincipals: { groups: ["ops"] } }] },
      }),
    );
    expect(renamed.name).toBe("front");
    expect((await issue()).status).toBe(401);
    expectOk(await tenant.admin.ssh.removeHostFromGroup({ params, body: {} }));
    expect((await tenant.admin.ssh.removeHostFromGroup({ params, body: {} })).status).toBe(400);
    expect(expectOk(await tenant.admin.ssh.getHost({ params: { sshHostId: a.id } })).loginMappings).toEqual([]);
    expectOk(await tenant.admin.ssh.deleteHostGroup({ params: { sshHostGroupId: group.id }, body: {} }));
    expect((await tenant.admin.ssh.getHostGroup({ params: { sshHostGroupId: group.id } })).status).toBe(404);
    expect(expectOk(await tenant.admin.ssh.getHost({ params: { sshHostId: b.id } })).hostname).toBe("b.example.test");
  });

  it("403 without rights, 400 for another project's host, 404 across organizations", async () => {
    const group = expectOk(await tenant.admin.ssh.createHostGroup({ body: { projectId, name: "rights" } }));
    const viewer = await createIdentity(tenant, { projectId, projectRole: "viewer" });
    expect((await viewer.client.ssh.createHostGroup({ body: { projectId, name: "mine" } })).status).toBe(403);
    const sshHostGroupId = group.id;
    expect((await viewer.client.ssh.updateHostGroup({ params: { sshHostGroupId }, body: { name: "x" } })).status).toBe(
      403,
    );
    expect((await viewer.client.ssh.deleteHostGroup({ params: { sshHostGroupId }, body: {} })).status).toBe(403);
    const mine = await host("c.example.test");
    const asViewer = await viewer.client.ssh.addHostToGroup({
      params: { sshHostGroupId, sshHostId: mine.id },
      body: {},
    });
    expect(asViewer.status).toBe(403);

    const elsewhere = (await createProject(tenant, "ssh")).id;
    const far = expectOk(
      await tenant.admin.ssh.createHost({ body: { projectId: elsewhere, hostname: "far.example.test" } }),
    );
    const crossProject = await tenant.admin.ssh.addHostToGroup({
      params: { sshHostGroupId, sshHostId: far.id },
      body: {},
    });
    expect(crossProject.status).toBe(400);

    const other = await createTenant(tenant.app);
    const theirs = expectOk(
      await other.admin.ssh.createHost({
        body: { projectId: (await createProject(other, "ssh")).id, hostname: "x.example.test" },
      }),
    );
    expect((await other.admin.ssh.getHostGroup({ params: { sshHostGroupId } })).status).toBe(404);
    expect((await other.admin.ssh.hostGroupHosts({ params: { sshHostGroupId }, query: {} })).status).toBe(404);
    const foreignHost = await tenant.admin.ssh.addHostToGroup({
      params: { sshHostGroupId, sshHostId: theirs.id },
      body: {},
    });
    expect(foreignHost.status).toBe(404);
    expect((await other.admin.ssh.projectHostGroups({ params: { projectId } })).status).toBe(404);
  });
});
