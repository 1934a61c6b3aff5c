import { inTransaction, type Tx } from "../../db/transaction";
import type { Database } from "../../db/database";
import { parseDuration } from "@keyward/contract";
import { noteAudit, type RequestContext } from "../../context";
import { isUniqueViolation, isUuid } from "../../db/errors";
import { BadRequestError, ForbiddenError, NotFoundError } from "../../errors";
import type { Ability, PermissionRule } from "../../permissions";
import { assertWithinBoundary } from "../authz/boundary";
import { assertCan } from "../authz/guard";
import { bumpPermissionVersion } from "../authz/permission-version";
import {
  loadHolderProjectRules,
  getProjectPermissionForRow,
  type ProjectKey,
  type ProjectPermission,
} from "../authz/project-access";
import { generatePrivilegeSlug } from "./privilege-slug";
import {
  deletePrivilegeOfRequest,
  deletePrivilegeRow,
  findDirectMembershipId,
  findPrivilegeBySlug,
  findPrivilegeWithProject,
  insertPrivilege,
  listPrivileges,
  listPrivilegesOfRequests,
  updatePrivilegeRow,
  type HolderType,
  type PrivilegeHolder,
  type PrivilegeRow,
  type PrivilegeWindow,
} from "./privileges.repository";

/**
 * Additional privileges, one service for both holders: an identity's (the privileges routes, v1 by
 * slug and v2 by id) and a person's (the project members' privilege routes). Managing a holder's
 * privileges is editing the holder (`edit` on the identity, or on members), and nobody grants (or
 * takes away) more than they hold: the caller must hold the holder's current rules and the
 * privilege's.
 */

export type { HolderType, PrivilegeHolder, PrivilegeRow, PrivilegeWindow };

/** A privilege's lifetime as requested: permanent, or from a start for an ms-style range. */
export type PrivilegeTiming =
  | { isTemporary: false }
  | { isTemporary: true; temporaryMode: string; temporaryRange: string; temporaryAccessStartTime: string | Date };

export const windowOf = (timing: PrivilegeTiming): PrivilegeWindow => {
  if (!timing.isTemporary) {
    return {
      is_temporary: false,
      temporary_mode: null,
      temporary_range: null,
      temporary_access_start_time: null,
      temporary_access_end_time: null,
    };
  }
  const start = new Date(timing.temporaryAccessStartTime);
  const range = parseDuration(timing.temporaryRange);
  if (range === undefined || !(range > 0)) throw new BadRequestError("Temporary range must be a positive number");
  return {
    is_temporary: true,
    temporary_mode: timing.temporaryMode,
    temporary_range: timing.temporaryRange,
    temporary_access_start_time: start,
    temporary_access_end_time: new Date(start.getTime() + range),
  };
};

const notAMember = (projectId: string) =>
  new ForbiddenError(
    `You are not a member of this project with ID ${projectId}. Please assign this identity to the project with the appropriate permissions, then try again.`,
    "ProjectMembershipNotFound",
  );
const NO_MEMBERSHIP = "Actor doesn't have membership";

/** The holder of the identity routes' privileges. */
export const identity = (identityId: string): PrivilegeHolder => ({ type: "identity", id: identityId });

export const holderOf = (type: HolderType, row: PrivilegeRow): PrivilegeHolder => ({ type, id: row.holder_id });

/** The right over the holder that reading (`read`) or changing (`edit`) its privileges needs. */
export const assertMayOnHolder = (ability: Ability, action: "read" | "edit", holder: PrivilegeHolder) =>
  holder.type === "identity"
    ? assertCan(ability, action, "identity", { identityId: holder.id })
    : assertCan(ability, action, "member");

/** What an audit event says of a privilege and its holder. */
const noteOf = (holder: PrivilegeHolder, details: { privilegeId: string; slug?: string }) => ({
  metadata: {
    privilegeId: details.privilegeId,
    [holder.type === "user" ? "userId" : "identityId"]: holder.id,
    ...(details.slug !== undefined ? { slug: details.slug } : {}),
  },
});

/** The target's current rules and direct membership, for writes. */
const loadTarget = async (ctx: RequestContext, projectId: string, holder: PrivilegeHolder) => {
  const target = isUuid(holder.id) ? await loadHolderProjectRules(ctx.deps.db, projectId, holder) : undefined;
  if (!target) throw notAMember(projectId);
  if (target.membershipId === null) throw new BadRequestError(NO_MEMBERSHIP);
  return { membershipId: target.membershipId, rules: target.rules };
};

/** Reads and deletes need the target to be a direct member, else 400. */
export const assertTargetMember = async (ctx: RequestContext, projectId: string, holder: PrivilegeHolder) => {
  const membershipId = isUuid(holder.id) ? await findDirectMembershipId(ctx.deps.db, projectId, holder) : undefined;
  if (!membershipId) throw new BadRequestError(NO_MEMBERSHIP);
  return membershipId;
};

/** Before reading a holder's privileges: the right to read the holder, and its direct membership (else 400). */
export const assertMayReadPrivileges = async (
  ctx: RequestContext,
  permission: ProjectPermission<ProjectKey>,
  holder: PrivilegeHolder,
) => {
  assertMayOnHolder(permission.ability, "read", holder);
  await assertTargetMember(ctx, permission.project.id, holder);
};

/** A holder's privilege by slug, readable by the caller; 404 when there is none. */
export const readPrivilegeBySlug = async (
  ctx: RequestContext,
  permission: ProjectPermission<ProjectKey>,
  holder: PrivilegeHolder,
  slug: string,
) => {
  await assertMayReadPrivileges(ctx, permission, holder);
  const row = await findPrivilegeBySlug(ctx.deps.db, permission.project.id, holder, slug);
  if (!row) throw new NotFoundError(`Additional privilege with name ${slug} doesn't exist`);
  return row;
};

/** A holder's privileges in a project, readable by the caller. */
export const readPrivileges = async (
  ctx: RequestContext,
  permission: ProjectPermission<ProjectKey>,
  holder: PrivilegeHolder,
) => {
  await assertMayReadPrivileges(ctx, permission, holder);
  return listPrivileges(ctx.deps.db, permission.project.id, holder);
};

/**
 * A privilege addressed by id; another organization's privilege is a plain 404. The privilege
 * and its project come in one query; a cached ability needs no other.
 */
export const requirePrivilegeById = async (ctx: RequestContext, type: HolderType, id: string) => {
  const loaded = isUuid(id) ? await findPrivilegeWithProject(ctx.deps.db, type, ctx.actor.orgId, id) : undefined;
  if (!loaded) throw new NotFoundError(`Privilege with id ${id} not found`);
  const { p_org_id, p_type, p_permission_version, ...row } = loaded;
  const project = { id: row.project_id, org_id: p_org_id, type: p_type, permission_version: p_permission_version };
  return { row, holder: holderOf(type, row), permission: await getProjectPermissionForRow(ctx, project) };
};

const changingPermissions = <T>(ctx: RequestContext, projectId: string, write: (trx: Tx) => Promise<T>) =>
  inTransaction(ctx, async (trx) => {
    await bumpPermissionVersion(trx, [projectId]);
    return write(trx);
  });

const GENERATED_SLUG_ATTEMPTS = 5;

/** A privilege an access request granted changes only through the request (revoke). */
export const REQUESTED_PRIVILEGE_MESSAGE =
  "This privilege was granted by an access request; revoke the request instead of changing the privilege";
const assertNotRequested = (row: { access_request_id: string | null }) => {
  if (row.access_request_id !== null) throw new BadRequestError(REQUESTED_PRIVILEGE_MESSAGE);
};

/**
 * An approved access request's privilege for its requester, written in the approval's transaction
 * (which has bumped the project's permission version first).
 */
export const grantRequestedPrivilege = (
  trx: Tx,
  holder: PrivilegeHolder,
  input: {
    projectId: string;
    membershipId: string;
    rules: PermissionRule[];
    window: PrivilegeWindow;
    requestId: string;
  },
) =>
  insertPrivilege(trx, holder, {
    ...input.window,
    slug: `requested-privilege-${generatePrivilegeSlug()}`,
    membership_id: input.membershipId,
    project_id: input.projectId,
    permissions: input.rules,
    access_request_id: input.requestId,
  });

/** Revoking a request: its privilege goes (the caller bumps the permission version first). */
export const revokeRequestedPrivilege = (trx: Tx, type: HolderType, requestId: string) =>
  deletePrivilegeOfRequest(trx, type, requestId);

/** The privileges (of either holder) approved requests granted. */
export const listRequestedPrivileges = (db: Database, requestIds: readonly string[]) =>
  listPrivilegesOfRequests(db, requestIds);

export const createPrivilege = async (
  ctx: RequestContext,
  permission: ProjectPermission<ProjectKey>,
  holder: PrivilegeHolder,
  input: { slug?: string; rules: PermissionRule[]; timing: PrivilegeTiming },
) => {
  const projectId = permission.project.id;
  assertMayOnHolder(permission.ability, "edit", holder);
  const target = await loadTarget(ctx, projectId, holder);
  assertWithinBoundary(permission.ability, [...target.rules, ...input.rules], "Failed to create additional privileges");
  const window = windowOf(input.timing);
  for (let attempt = 1; ; attempt++) {
    const slug = input.slug ?? generatePrivilegeSlug();
    try {
      return await changingPermissions(ctx, projectId, async (trx) => {
        const row = await insertPrivilege(trx, holder, {
          ...window,
          slug,
          membership_id: target.membershipId,
          project_id: projectId,
          permissions: input.rules,
        });
        noteAudit(ctx, noteOf(holder, { privilegeId: row.id, slug }));
        return row;
      });
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      if (input.slug !== undefined || attempt >= GENERATED_SLUG_ATTEMPTS) {
        throw new BadRequestError(`Additional privilege with name ${slug} exists`);
      }
    }
  }
};

export const updatePrivilege = async (
  ctx: RequestContext,
  permission: ProjectPermission<ProjectKey>,
  holder: PrivilegeHolder,
  row: PrivilegeRow,
  input: { slug?: string; rules?: PermissionRule[]; window?: PrivilegeWindow },
) => {
  assertMayOnHolder(permission.ability, "edit", holder);
  assertNotRequested(row);
  const target = await loadTarget(ctx, row.project_id, holder);
  // The privilege's stored rules count even while it is inactive: re-timing an expired privilege
  // would otherwise revive rules the caller does not hold.
  const granted = input.rules ?? (row.permissions as PermissionRule[]);
  noteAudit(ctx, noteOf(holder, { privilegeId: row.id, slug: input.slug ?? row.slug }));
  assertWithinBoundary(permission.ability, [...target.rules, ...granted], "Failed to update additional privileges");
  try {
    return await changingPermissions(ctx, row.project_id, (trx) =>
      updatePrivilegeRow(trx, holder.type, row.id, { slug: input.slug, permissions: input.rules, ...input.window }),
    );
  } catch (error) {
    if (isUniqueViolation(error)) throw new BadRequestError("Additional privilege with provided slug already exists");
    throw error;
  }
};

/** Removing a privilege is changing its holder: the caller must hold what the holder holds. */
export const deletePrivilege = async (
  ctx: RequestContext,
  permission: ProjectPermission<ProjectKey>,
  holder: PrivilegeHolder,
  row: PrivilegeRow,
) => {
  assertMayOnHolder(permission.ability, "edit", holder);
  assertNotRequested(row);
  await assertTargetMember(ctx, row.project_id, holder);
  const target = await loadHolderProjectRules(ctx.deps.db, row.project_id, holder);
  assertWithinBoundary(
    permission.ability,
    [...(target?.rules ?? []), ...(row.permissions as PermissionRule[])],
    "Failed to delete additional privileges",
  );
  noteAudit(ctx, noteOf(holder, { privilegeId: row.id, slug: row.slug }));
  await changingPermissions(ctx, row.project_id, (trx) => deletePrivilegeRow(trx, holder.type, row.id));
  return row;
};
