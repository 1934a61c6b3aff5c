import { inTransaction } from "../../db/transaction";
import { noteAudit, type RequestContext } from "../../context";
import { isUniqueViolation, isUuid } from "../../db/errors";
import { BadRequestError, NotFoundError } from "../../errors";
import { toIso } from "../../lib/dates";
import { assertCan } from "../authz/guard";
import { requireHost, sshProject } from "./ssh-access";
import {
  deleteHostGroupMembership,
  deleteHostGroupRow,
  findHostGroup,
  insertHostGroup,
  insertHostGroupMembership,
  listHostsForGroup,
  listProjectHostGroups,
  updateHostGroupRow,
  type HostGroupRow,
} from "./ssh-host-group.repository";
import { hostDtos, stored, type LoginMappingInput } from "./ssh-host.service";

type GroupRow = Omit<HostGroupRow, "org_id">;

const groupDto = (row: GroupRow) => ({
  id: row.id,
  projectId: row.project_id,
  name: row.name,
  loginMappings: row.login_mappings.map((m) => ({
    loginUser: m.loginUser,
    allowedPrincipals: { usernames: m.usernames, groups: m.groups },
  })),
  createdAt: toIso(row.created_at),
  updatedAt: toIso(row.updated_at),
});

const nameTaken = (name: string) => (error: unknown) => {
  if (isUniqueViolation(error)) throw new BadRequestError(`SSH host group with name ${name} already exists`);
  throw error;
};

/** A host group of the caller's organization with `action` checked; another organization's is a 404. */
const requireHostGroup = async (ctx: RequestContext, id: string, action: string) => {
  const message = `SSH host group with ID ${id} not found`;
  const row = isUuid(id) ? await findHostGroup(ctx.deps.db, id) : undefined;
  if (!row || row.org_id !== ctx.actor.orgId) throw new NotFoundError(message);
  const { ability } = await sshProject(ctx, row.project_id).catch((error: unknown) => {
    throw error instanceof NotFoundError ? new NotFoundError(message) : error;
  });
  assertCan(ability, action, "ssh-host-groups");
  return row;
};

export const createSshHostGroup = async (
  ctx: RequestContext,
  body: { projectId: string; name: string; loginMappings: LoginMappingInput[] },
) => {
  const { ability, project } = await sshProject(ctx, body.projectId);
  assertCan(ability, "create", "ssh-host-groups");
  const id = await inTransaction(ctx, async (trx) => {
    const created = await insertHostGroup(trx, {
      project_id: project.id,
      name: body.name,
      login_mappings: stored(body.loginMappings),
    });
    noteAudit(ctx, { metadata: { sshHostGroupId: created.id, name: body.name } });
    return created.id;
  }).catch(nameTaken(body.name));
  return groupDto((await findHostGroup(ctx.deps.db, id))!);
};

export const getSshHostGroup = async (ctx: RequestContext, id: string) => {
  const row = await requireHostGroup(ctx, id, "read");
  noteAudit(ctx, { metadata: { sshHostGroupId: row.id, name: row.name } });
  return groupDto(row);
};

export const updateSshHostGroup = async (
  ctx: RequestContext,
  id: string,
  body: { name?: string; loginMappings?: LoginMappingInput[] },
) => {
  const row = await requireHostGroup(ctx, id, "edit");
  await inTransaction(ctx, async (trx) => {
    await updateHostGroupRow(trx, row.id, {
      name: body.name,
      ...(body.loginMappings ? { login_mappings: stored(body.loginMappings) } : {}),
    });
    noteAudit(ctx, { metadata: { sshHostGroupId: row.id, name: body.name ?? row.name } });
  }).catch(nameTaken(body.name ?? row.name));
  return groupDto((await findHostGroup(ctx.deps.db, row.id))!);
};

export const deleteSshHostGroup = async (ctx: RequestContext, id: string) => {
  const row = await requireHostGroup(ctx, id, "delete");
  await inTransaction(ctx, async (trx) => {
    await deleteHostGroupRow(trx, row.id);
    noteAudit(ctx, { metadata: { sshHostGroupId: row.id, name: row.name } });
  });
  return groupDto(row);
};

export const listSshHostGroups = async (ctx: RequestContext, projectId: string) => {
  const { ability, project } = await sshProject(ctx, projectId);
  assertCan(ability, "read", "ssh-host-groups");
  const rows = await listProjectHostGroups(ctx.deps.db, project.id);
  return { groups: rows.map((r) => ({ ...groupDto(r), hostCount: Number(r.host_count ?? 0) })) };
};

export const listSshHostGroupHosts = async (
  ctx: RequestContext,
  id: string,
  query: { filter?: "group-members" | "non-group-members"; offset: number; limit: number },
) => {
  const row = await requireHostGroup(ctx, id, "read");
  const which = query.filter === "group-members" ? "members" : query.filter === "non-group-members" ? "others" : "all";
  const { rows, totalCount } = await listHostsForGroup(ctx.deps.db, row, which, query);
  noteAudit(ctx, { metadata: { sshHostGroupId: row.id, name: row.name } });
  return {
    hosts: rows.map((h) => ({
      id: h.id,
      hostname: h.hostname,
      alias: h.alias,
      isPartOfGroup: h.joined_at !== null,
      joinedGroupAt: toIso(h.joined_at),
    })),
    totalCount,
  };
};

/**
 * Adds a host to a group or takes it out: the group's right (edit) and the host's (edit, with its
 * hostname), since a group's mappings decide who logs in to its hosts; both of one project.
 */
export const changeSshHostGroupMembership = async (
  ctx: RequestContext,
  params: { sshHostGroupId: string; sshHostId: string },
  change: "add" | "remove",
) => {
  const group = await requireHostGroup(ctx, params.sshHostGroupId, "edit");
  const { row: host } = await requireHost(ctx, params.sshHostId, "edit");
  if (host.project_id !== group.project_id)
    throw new BadRequestError(`SSH host ${host.hostname} is not in the project of host group ${group.name}`);
  await inTransaction(ctx, async (trx) => {
    const changed =
      change === "add"
        ? await insertHostGroupMembership(trx, group.id, host.id)
        : await deleteHostGroupMembership(trx, group.id, host.id);
    if (!changed)
      throw new BadRequestError(
        change === "add"
          ? `SSH host ${host.hostname} is already in host group ${group.name}`
          : `SSH host ${host.hostname} is not in host group ${group.name}`,
      );
    noteAudit(ctx, {
      metadata: { sshHostGroupId: group.id, name: group.name, sshHostId: host.id, hostname: host.hostname },
    });
  });
  return (await hostDtos(ctx, [host]))[0]!;
};
