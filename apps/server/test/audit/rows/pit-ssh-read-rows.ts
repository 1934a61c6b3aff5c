import type { ReadOperation } from "../../../src/modules/audit/audit-events";
import { createProject, type Tenant } from "../../helpers/tenant";
import { sshWorld } from "../../ssh/helpers";
import { ok, written, type Step } from "./runner";

type PitSshRead = Extract<
  ReadOperation,
  | `pit.${string}`
  | "ssh.getCa"
  | "ssh.caTemplates"
  | "ssh.getTemplate"
  | "ssh.getHost"
  | "ssh.getHostGroup"
  | "ssh.hostGroupHosts"
>;

/** A project whose dev root has one secret: its commits, newest first. */
const committed = async (tenant: Tenant) => {
  const project = await createProject(tenant);
  written(
    await tenant.admin.secretsV4.create({
      params: { secretName: "READ_ROW" },
      body: { projectId: project.id, environment: "dev", secretValue: "v" },
    }),
  );
  const query = { projectId: project.id, environment: "dev", path: "/" };
  const { commits } = ok(await tenant.admin.pit.list({ query }));
  return { project, query, commit: commits[0]! };
};

export const PIT_SSH_READ_STEPS: Record<PitSshRead, Step> = {
  "pit.count": async ({ tenant, act }) => {
    const { project, query } = await committed(tenant);
    ok(await act(() => tenant.admin.pit.count({ query })));
    return { projectId: project.id, metadata: { environment: "dev", commitCount: 2 } };
  },
  "pit.list": async ({ tenant, act }) => {
    const { project, query } = await committed(tenant);
    ok(await act(() => tenant.admin.pit.list({ query })));
    return { projectId: project.id, metadata: { environment: "dev", commitCount: 2 } };
  },
  "pit.changes": async ({ tenant, act }) => {
    const { project, commit } = await committed(tenant);
    ok(
      await act(() => tenant.admin.pit.changes({ params: { commitId: commit.id }, query: { projectId: project.id } })),
    );
    return { projectId: project.id, metadata: { commitId: commit.id, changesCount: 1 } };
  },
  "pit.compare": async ({ tenant, act }) => {
    const { project, commit } = await committed(tenant);
    const query = {
      projectId: project.id,
      environment: "dev",
      folderId: commit.folderId,
      deepRollback: "false" as const,
    };
    ok(await act(() => tenant.admin.pit.compare({ params: { commitId: commit.id }, query })));
    return { projectId: project.id, metadata: { targetCommitId: commit.id, diffsCount: 0 } };
  },
  "pit.state": async ({ tenant, act }) => {
    const { project, commit } = await committed(tenant);
    const query = { projectId: project.id, folderId: commit.folderId };
    ok(await act(() => tenant.admin.pit.state({ params: { commitId: commit.id }, query })));
    return { projectId: project.id, metadata: { commitId: commit.id, resourceCount: 1 } };
  },
  "ssh.getCa": async ({ tenant, act }) => {
    const { project, ca } = await sshWorld(tenant);
    ok(await act(() => tenant.admin.ssh.getCa({ params: { sshCaId: ca.id } })));
    return { projectId: project.id, metadata: { sshCaId: ca.id } };
  },
  "ssh.caTemplates": async ({ tenant, act }) => {
    const { project, ca } = await sshWorld(tenant);
    ok(await act(() => tenant.admin.ssh.caTemplates({ params: { sshCaId: ca.id } })));
    return { projectId: project.id, metadata: { sshCaId: ca.id } };
  },
  "ssh.getTemplate": async ({ tenant, act }) => {
    const { project, template } = await sshWorld(tenant);
    ok(await act(() => tenant.admin.ssh.getTemplate({ params: { certificateTemplateId: template.id } })));
    return { projectId: project.id, metadata: { certificateTemplateId: template.id } };
  },
  "ssh.getHost": async ({ tenant, act }) => {
    const { project } = await sshWorld(tenant);
    const host = ok(await tenant.admin.ssh.createHost({ body: { projectId: project.id, hostname: "r.example.test" } }));
    ok(await act(() => tenant.admin.ssh.getHost({ params: { sshHostId: host.id } })));
    return { projectId: project.id, metadata: { sshHostId: host.id, hostname: "r.example.test" } };
  },
  "ssh.getHostGroup": async ({ tenant, act }) => {
    const { project } = await sshWorld(tenant);
    const group = ok(await tenant.admin.ssh.createHostGroup({ body: { projectId: project.id, name: "web" } }));
    ok(await act(() => tenant.admin.ssh.getHostGroup({ params: { sshHostGroupId: group.id } })));
    return { projectId: project.id, metadata: { sshHostGroupId: group.id, name: "web" } };
  },
  "ssh.hostGroupHosts": async ({ tenant, act }) => {
    const { project } = await sshWorld(tenant);
    const group = ok(await tenant.admin.ssh.createHostGroup({ body: { projectId: project.id, name: "db" } }));
    ok(await act(() => tenant.admin.ssh.hostGroupHosts({ params: { sshHostGroupId: group.id }, query: {} })));
    return { projectId: project.id, metadata: { sshHostGroupId: group.id, name: "db" } };
  },
};
