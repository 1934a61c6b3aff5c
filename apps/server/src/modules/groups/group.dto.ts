import type { Group } from "@keyward/contract";
import { toIso } from "../../lib/dates";
import { toMembershipRoleDto } from "../projects/membership-roles";
import type { GroupRow } from "./group.repository";
import type { ProjectGroupMembershipRow, findGroupMembershipRoles } from "./project-group.repository";

export const toGroupDto = (row: GroupRow): Group => ({
  id: row.id,
  orgId: row.org_id,
  name: row.name,
  slug: row.slug,
  role: row.role,
  roleId: null,
  createdAt: toIso(row.created_at),
  updatedAt: toIso(row.updated_at),
});

export const toGroupUserDto = (row: {
  id: string;
  username: string;
  email: string;
  first_name: string;
  last_name: string;
}) => ({
  id: row.id,
  username: row.username,
  email: row.email,
  firstName: row.first_name,
  lastName: row.last_name,
});

type RoleRow = Awaited<ReturnType<typeof findGroupMembershipRoles>>[number];

export const toProjectGroupMembershipDto = (row: ProjectGroupMembershipRow, roles: RoleRow[]) => ({
  id: row.id,
  groupId: row.group_id,
  createdAt: toIso(row.created_at),
  updatedAt: toIso(row.updated_at),
  roles: roles.filter((r) => r.membership_id === row.id).map(toMembershipRoleDto),
  group: { id: row.group_id, name: row.name, slug: row.slug },
});

export const toGroupMembershipRowDto = (row: {
  id: string;
  group_id: string;
  project_id: string;
  created_at: Date | string;
  updated_at: Date | string;
}) => ({
  id: row.id,
  groupId: row.group_id,
  projectId: row.project_id,
  createdAt: toIso(row.created_at),
  updatedAt: toIso(row.updated_at),
});
