import type { MutatingOperation } from "../../../src/modules/audit/audit-events";
import { expectOk, type Tenant } from "../../helpers/tenant";
import { sshKeygen, sshWorld } from "../../ssh/helpers";
import { configureSso, signedInPerson } from "../../sso/sso-helpers";
import { ok, type Step } from "./runner";

type SshOperation = Extract<MutatingOperation, `ssh.${string}`>;

/** An SSH project with a host group and a host that is not in it yet. */
const groupAndHost = async (tenant: Tenant) => {
  const { project } = await sshWorld(tenant);
  const group = expectOk(await tenant.admin.ssh.createHostGroup({ body: { projectId: project.id, name: "web" } }));
  const host = expectOk(
    await tenant.admin.ssh.createHost({ body: { projectId: project.id, hostname: "g.example.test" } }),
  );
  return { project, group, host };
};

export const SSH_STEPS: Record<SshOperation, Step> = {
  "ssh.createCa": async ({ tenant, act }) => {
    const { project } = await sshWorld(tenant);
    const { ca } = ok(
      await act(() =>
        tenant.admin.ssh.createCa({ body: { projectId: project.id, friendlyName: "second", keyAlgorithm: "ED25519" } }),
      ),
    );
    return { projectId: project.id, metadata: { sshCaId: ca.id, friendlyName: "second" } };
  },
  "ssh.updateCa": async ({ tenant, act }) => {
    const { project, ca } = await sshWorld(tenant);
    ok(await act(() => tenant.admin.ssh.updateCa({ params: { sshCaId: ca.id }, body: { status: "disabled" } })));
    return { projectId: project.id, metadata: { sshCaId: ca.id, status: "disabled" } };
  },
  "ssh.deleteCa": async ({ tenant, act }) => {
    const { project, ca } = await sshWorld(tenant);
    ok(await act(() => tenant.admin.ssh.deleteCa({ params: { sshCaId: ca.id }, body: {} })));
    return { projectId: project.id, metadata: { sshCaId: ca.id } };
  },
  "ssh.createTemplate": async ({ tenant, act }) => {
    const { project, ca } = await sshWorld(tenant);
    const template = ok(
      await act(() =>
        tenant.admin.ssh.createTemplate({
          body: {
            sshCaId: ca.id,
            name: "second",
            ttl: "1h",
            maxTTL: "1d",
            allowedUsers: ["bob"],
            allowedHosts: [],
            allowUserCertificates: true,
            allowHostCertificates: false,
            allowCustomKeyIds: false,
          },
        }),
      ),
    );
    return { projectId: project.id, metadata: { certificateTemplateId: template.id, name: "second" } };
  },
  "ssh.updateTemplate": async ({ tenant, act }) => {
    const { project, template } = await sshWorld(tenant);
    ok(
      await act(() =>
        tenant.admin.ssh.updateTemplate({ params: { certificateTemplateId: template.id }, body: { ttl: "2h" } }),
      ),
    );
    return { projectId: project.id, metadata: { certificateTemplateId: template.id, ttl: "2h" } };
  },
  "ssh.deleteTemplate": async ({ tenant, act }) => {
    const { project, template } = await sshWorld(tenant);
    ok(await act(() => tenant.admin.ssh.deleteTemplate({ params: { certificateTemplateId: template.id }, body: {} })));
    return { projectId: project.id, metadata: { certificateTemplateId: template.id } };
  },
  "ssh.sign": async ({ tenant, act }) => {
    const { project, template } = await sshWorld(tenant);
    const { publicKey } = sshKeygen();
    const signed = ok(
      await act(() =>
        tenant.admin.ssh.sign({
          body: {
            certificateTemplateId: template.id,
            publicKey,
            certType: "user",
            principals: ["deploy"],
            keyId: "row",
          },
        }),
      ),
    );
    return {
      projectId: project.id,
      metadata: {
        certificateTemplateId: template.id,
        principals: ["deploy"],
        serialNumber: signed.serialNumber,
        keyId: "row",
      },
    };
  },
  "ssh.issue": async ({ tenant, act }) => {
    const { project, template } = await sshWorld(tenant);
    const issued = ok(
      await act(() =>
        tenant.admin.ssh.issue({
          body: {
            certificateTemplateId: template.id,
            keyAlgorithm: "EC_prime256v1",
            certType: "user",
            principals: ["alice"],
          },
        }),
      ),
    );
    return {
      projectId: project.id,
      metadata: { principals: ["alice"], keyAlgorithm: "EC_prime256v1", serialNumber: issued.serialNumber },
    };
  },
  "ssh.revoke": async ({ tenant, act }) => {
    const { project, template } = await sshWorld(tenant);
    const { publicKey } = sshKeygen();
    const signed = expectOk(
      await tenant.admin.ssh.sign({
        body: { certificateTemplateId: template.id, publicKey, certType: "user", principals: ["deploy"] },
      }),
    );
    ok(await act(() => tenant.admin.ssh.revoke({ params: { certificateId: signed.certificateId }, body: {} })));
    return {
      projectId: project.id,
      metadata: { sshCertificateId: signed.certificateId, serialNumber: signed.serialNumber },
    };
  },
  "ssh.createHost": async ({ tenant, act }) => {
    const { project } = await sshWorld(tenant);
    const host = ok(
      await act(() => tenant.admin.ssh.createHost({ body: { projectId: project.id, hostname: "web.example.test" } })),
    );
    return { projectId: project.id, metadata: { sshHostId: host.id, hostname: "web.example.test" } };
  },
  "ssh.updateHost": async ({ tenant, act }) => {
    const { project } = await sshWorld(tenant);
    const host = expectOk(
      await tenant.admin.ssh.createHost({ body: { projectId: project.id, hostname: "a.example.test" } }),
    );
    ok(await act(() => tenant.admin.ssh.updateHost({ params: { sshHostId: host.id }, body: { alias: "a" } })));
    return { projectId: project.id, metadata: { sshHostId: host.id, hostname: "a.example.test" } };
  },
  "ssh.deleteHost": async ({ tenant, act }) => {
    const { project } = await sshWorld(tenant);
    const host = expectOk(
      await tenant.admin.ssh.createHost({ body: { projectId: project.id, hostname: "b.example.test" } }),
    );
    ok(await act(() => tenant.admin.ssh.deleteHost({ params: { sshHostId: host.id }, body: {} })));
    return { projectId: project.id, metadata: { sshHostId: host.id } };
  },
  "ssh.issueHostCert": async ({ tenant, act }) => {
    const { project } = await sshWorld(tenant);
    const host = expectOk(
      await tenant.admin.ssh.createHost({ body: { projectId: project.id, hostname: "c.example.test" } }),
    );
    const { publicKey } = sshKeygen();
    const signed = ok(
      await act(() => tenant.admin.ssh.issueHostCert({ params: { sshHostId: host.id }, body: { publicKey } })),
    );
    return {
      projectId: project.id,
      metadata: { sshHostId: host.id, principals: ["c.example.test"], serialNumber: signed.serialNumber },
    };
  },
  "ssh.issueUserCert": async ({ tenant, act }) => {
    const { project } = await sshWorld(tenant);
    await configureSso(tenant);
    const person = await signedInPerson(tenant);
    ok(
      await tenant.admin.users.inviteProjectMembers({
        params: { projectId: project.id },
        body: { emails: [person.email] },
      }),
    );
    const host = expectOk(
      await tenant.admin.ssh.createHost({
        body: {
          projectId: project.id,
          hostname: "d.example.test",
          loginMappings: [{ loginUser: "deploy", allowedPrincipals: { usernames: [person.user.username] } }],
        },
      }),
    );
    const signed = ok(
      await act(() =>
        person.client.ssh.issueUserCert({ params: { sshHostId: host.id }, body: { loginUser: "deploy" } }),
      ),
    );
    return {
      projectId: project.id,
      actor: { type: "user", metadata: { userId: person.user.id, email: person.email } },
      metadata: { sshHostId: host.id, loginUser: "deploy", principals: ["deploy"], serialNumber: signed.serialNumber },
    };
  },
  "ssh.createHostGroup": async ({ tenant, act }) => {
    const { project } = await sshWorld(tenant);
    const group = ok(
      await act(() => tenant.admin.ssh.createHostGroup({ body: { projectId: project.id, name: "web" } })),
    );
    return { projectId: project.id, metadata: { sshHostGroupId: group.id, name: "web" } };
  },
  "ssh.updateHostGroup": async ({ tenant, act }) => {
    const { project } = await sshWorld(tenant);
    const group = expectOk(await tenant.admin.ssh.createHostGroup({ body: { projectId: project.id, name: "web" } }));
    const params = { sshHostGroupId: group.id };
    ok(await act(() => tenant.admin.ssh.updateHostGroup({ params, body: { name: "front" } })));
    return { projectId: project.id, metadata: { sshHostGroupId: group.id, name: "front" } };
  },
  "ssh.deleteHostGroup": async ({ tenant, act }) => {
    const { project } = await sshWorld(tenant);
    const group = expectOk(await tenant.admin.ssh.createHostGroup({ body: { projectId: project.id, name: "web" } }));
    ok(await act(() => tenant.admin.ssh.deleteHostGroup({ params: { sshHostGroupId: group.id }, body: {} })));
    return { projectId: project.id, metadata: { sshHostGroupId: group.id, name: "web" } };
  },
  "ssh.addHostToGroup": async ({ tenant, act }) => {
    const { project, group, host } = await groupAndHost(tenant);
    const params = { sshHostGroupId: group.id, sshHostId: host.id };
    ok(await act(() => tenant.admin.ssh.addHostToGroup({ params, body: {} })));
    return { projectId: project.id, metadata: { sshHostGroupId: group.id, sshHostId: host.id } };
  },
  "ssh.removeHostFromGroup": async ({ tenant, act }) => {
    const { project, group, host } = await groupAndHost(tenant);
    const params = { sshHostGroupId: group.id, sshHostId: host.id };
    expectOk(await tenant.admin.ssh.addHostToGroup({ params, body: {} }));
    ok(await act(() => tenant.admin.ssh.removeHostFromGroup({ params, body: {} })));
    return { projectId: project.id, metadata: { sshHostGroupId: group.id, sshHostId: host.id } };
  },
};
