import type { Database } from "../../db/database";
import { findMembershipRoles, type MembershipRoleTable, type RoleGrant } from "./membership-roles.repository";

/** Role grants as rows of a membership-roles table; identity and group memberships store them alike. */
export const roleRows = (membershipId: string, roles: readonly RoleGrant[]) =>
  roles.map((r) => ({
    membership_id: membershipId,
    role: r.role,
    custom_role_id: r.customRoleId,
    is_temporary: r.isTemporary,
    temporary_mode: r.isTemporary ? (r.temporaryMode ?? "relative") : null,
    temporary_range: r.isTemporary ? (r.temporaryRange ?? null) : null,
    temporary_access_start_time: r.isTemporary ? (r.temporaryAccessStartTime ?? null) : null,
    temporary_access_end_time: r.isTemporary ? (r.temporaryAccessEndTime ?? null) : null,
  }));

/** The role grants of some memberships of one kind (identity, person or group), with their custom roles. */
export const membershipRolesOf = (db: Database, membershipIds: string[], table: MembershipRoleTable) =>
  findMembershipRoles(db, membershipIds, table);

export type { RoleGrant };
