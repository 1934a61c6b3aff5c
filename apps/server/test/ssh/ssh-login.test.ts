import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createProject, createTenant, expectOk, uniqueName, type Tenant } from "../helpers/tenant";
import { configureSso, signedInPerson } from "../sso/sso-helpers";
import { sshKeygen } from "./helpers";
import { HOST_NAME, LOGIN_USER, sshLogin, startSshd, type Sshd } from "./sshd";

type Person = Awaited<ReturnType<typeof signedInPerson>>;

const text = async (tenant: Tenant, path: string) => (await fetch(new URL(path, tenant.app.baseUrl))).text();

describe("people log in to SSH hosts through their login mappings", () => {
  let tenant: Tenant;
  let alice: Person; // a direct member named by a mapping
  let carol: Person; // a member through a group that a mapping names
  let dave: Person; // a member no mapping names
  let erin: Person; // of the organization, in no project
  let host: { id: string; projectId: string; userSshCaId: string };
  let otherProjectHost: { id: string };
  let sshd: Sshd;
  let knownHosts: string;

  beforeAll(async () => {
    tenant = await createTenant();
    await configureSso(tenant);
    const people = await Promise.all([1, 2, 3, 4].map(() => signedInPerson(tenant)));
    [alice, carol, dave, erin] = people as [Person, Person, Person, Person];
    const project = await createProject(tenant, "ssh");
    const invite = (projectId: string, person: Person) =>
      tenant.admin.users.inviteProjectMembers({ params: { projectId }, body: { emails: [person.email] } });
    expectOk(await invite(project.id, alice));
    expectOk(await invite(project.id, dave));
    const group = expectOk(await tenant.admin.groups.create({ body: { name: uniqueName("operators") } }));
    expectOk(await tenant.admin.groups.addUser({ params: { id: group.id, username: carol.user.username } }));
    expectOk(
      await tenant.admin.projectGroups.add({
        params: { projectId: project.id, groupIdOrName: group.id },
        body: { role: "viewer" },
      }),
    );
    host = expectOk(
      await tenant.admin.ssh.createHost({
        body: {
          projectId: project.id,
          hostname: HOST_NAME,
          userCertTtl: "15m",
          loginMappings: [
            { loginUser: LOGIN_USER, allowedPrincipals: { usernames: [alice.user.username.toUpperCase()] } },
            { loginUser: "operator", allowedPrincipals: { groups: [group.slug] } },
          ],
        },
      }),
    );
    expectOk(
      await tenant.admin.ssh.createHost({
        body: {
          projectId: project.id,
          hostname: "nobody.example.test",
          loginMappings: [{ loginUser: "root", allowedPrincipals: { usernames: ["someone-else"] } }],
        },
      }),
    );
    const elsewhere = await createProject(tenant, "ssh");
    otherProjectHost = expectOk(
      await tenant.admin.ssh.createHost({
        body: {
          projectId: elsewhere.id,
          hostname: "elsewhere.example.test",
          loginMappings: [{ loginUser: LOGIN_USER, allowedPrincipals: { usernames: [alice.user.username] } }],
        },
      }),
    );
    const hostKey = sshKeygen();
    const hostCert = expectOk(
      await tenant.admin.ssh.issueHostCert({ params: { sshHostId: host.id }, body: { publicKey: hostKey.publicKey } }),
    );
    writeFileSync(`${hostKey.path}-cert.pub`, `${hostCert.signedKey}\n`);
    const userCa = await text(tenant, `/api/v1/ssh/hosts/${host.id}/user-ca-public-key`);
    const krlUrl = new URL(`/api/v1/ssh/ca/${host.userSshCaId}/krl`, tenant.app.baseUrl);
    const krl = Buffer.from(await (await fetch(krlUrl)).arrayBuffer());
    sshd = await startSshd({ hostKey: hostKey.path, trustedUserCaKeys: userCa, krl });
    knownHosts = `@cert-authority ${HOST_NAME} ${await text(tenant, `/api/v1/ssh/hosts/${host.id}/host-ca-public-key`)}`;
  }, 120_000);
  afterAll(() => sshd?.stop());

  it("lists each person's hosts with only the mappings that admit them", async () => {
    const hostsOf = async (person: Person) =>
      expectOk(await person.client.ssh.loginHosts()).map((h) => [h.hostname, h.loginMappings.map((m) => m.loginUser)]);
    expect(await hostsOf(alice)).toEqual([[HOST_NAME, [LOGIN_USER]]]);
    expect(await hostsOf(carol)).toEqual([[HOST_NAME, ["operator"]]]);
    expect(await hostsOf(dave)).toEqual([]);
    expect(await hostsOf(erin)).toEqual([]);
  });

  it("issues a key and certificate that sshd accepts for the mapped login user", async () => {
    const issued = expectOk(
      await alice.client.ssh.issueUserCert({ params: { sshHostId: host.id }, body: { loginUser: LOGIN_USER } }),
    );
    expect(issued.keyAlgorithm).toBe("ED25519");
    const dir = sshKeygen().dir;
    writeFileSync(join(dir, "person"), issued.privateKey, { mode: 0o600 });
    writeFileSync(join(dir, "person-cert.pub"), `${issued.signedKey}\n`);
    const described = execFileSync("ssh-keygen", ["-L", "-f", join(dir, "person-cert.pub")], { encoding: "utf8" });
    expect(described).toContain(`Key ID: "user-${alice.user.id}"`);
    expect(described).toMatch(new RegExp(`Principals: \\n\\s+${LOGIN_USER}\\n\\s+Critical`));
    const [, from, to] = /Valid: from (\S+) to (\S+)/.exec(described)!;
    expect(Date.parse(`${to}Z`) - Date.parse(`${from}Z`)).toBe(16 * 60_000);
    expect(sshLogin(sshd, join(dir, "person"), knownHosts).stdout).toContain(`logged-in-as-${LOGIN_USER}`);
    const listed = expectOk(
      await tenant.admin.ssh.projectCertificates({ params: { projectId: host.projectId }, query: {} }),
    ).certificates;
    expect(listed.find((c) => c.serialNumber === issued.serialNumber)).toMatchObject({ sshHostId: host.id });
  });

  it("refuses a login user no mapping of the person names, outsiders, other organizations and identities", async () => {
    const issue = (person: Person, sshHostId: string, loginUser: string) =>
      person.client.ssh.issueUserCert({ params: { sshHostId }, body: { loginUser } });
    expect(await issue(alice, host.id, "operator")).toMatchObject({
      status: 401,
      body: { message: "You are not allowed to login as operator on this host" },
    });
    expect((await issue(carol, host.id, "operator")).status).toBe(200);
    expect((await issue(dave, host.id, LOGIN_USER)).status).toBe(401);
    expect((await issue(erin, host.id, LOGIN_USER)).status).toBe(403);
    expect((await issue(alice, otherProjectHost.id, LOGIN_USER)).status).toBe(403);
    expect((await issue(alice, "6f1c1d2e-8a4b-4c3d-9e2f-1a2b3c4d5e6f", LOGIN_USER)).status).toBe(404);
    const other = await createTenant(tenant.app);
    const foreign = expectOk(
      await other.admin.ssh.createHost({
        body: {
          projectId: (await createProject(other, "ssh")).id,
          hostname: "foreign.example.test",
          loginMappings: [{ loginUser: LOGIN_USER, allowedPrincipals: { usernames: [alice.user.username] } }],
        },
      }),
    );
    expect((await issue(alice, foreign.id, LOGIN_USER)).status).toBe(404);
    const machine = await tenant.admin.ssh.issueUserCert({
      params: { sshHostId: host.id },
      body: { loginUser: LOGIN_USER },
    });
    expect(machine).toMatchObject({ status: 400, body: { message: expect.stringContaining("Only people") } });
    expect((await tenant.admin.ssh.loginHosts()).status).toBe(400);
  });
});
