import { inTransaction, type Tx } from "../../db/transaction";
import type { Database } from "../../db/database";
import { parseDuration } from "@keyward/contract";
import { noteAudit, type RequestContext } from "../../context";
import { isUniqueViolation, isUuid } from "../../db/errors";
import { BadRequestError, ForbiddenError, NotFoundError } from "../../errors";
import type { PermissionRule } from "../../permissions";
import { assertWithinBoundary } from "../authz/boundary";
import { assertCan } from "../authz/guard";
import { bumpPermissionVersion } from "../authz/permission-version";
import {
  loadIdentityProjectRules,
  getProjectPermissionForRow,
  type ProjectKey,
  type ProjectPermission,
} from "../authz/project-access";
import { generatePrivilegeSlug } from "./privilege-slug";
import {
  deletePrivilegeOfRequest,
  deletePrivilegeRow,
  findDirectMembershipId,
  findPrivilegeWithProject,
  insertPrivilege,
  listPrivilegesOfRequests,
  updatePrivilegeRow,
  type PrivilegeRow,
  type PrivilegeWindow,
} from "./privileges.repository";

export type { PrivilegeWindow };

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

/** The target's current rules and direct membership, for writes. */
const loadTarget = async (ctx: RequestContext, projectId: string, identityId: string) => {
  const target = isUuid(identityId) ? await loadIdentityProjectRules(ctx.deps.db, projectId, identityId) : undefined;
  if (!target) throw notAMember(projectId);
  if (target.membershipId === null) throw new BadRequestError(NO_MEMBERSHIP);
  return { membershipId: target.membershipId, rules: target.rules };
};

/** Reads and deletes need the target to be a member, else 400. */
export const assertTargetMember = async (ctx: RequestContext, projectId: string, identityId: string) => {
  const membershipId = isUuid(identityId)
    ? await findDirectMembershipId(ctx.deps.db, projectId, identityId)
    : undefined;
  if (!membershipId) throw new BadRequestError(NO_MEMBERSHIP);
  return membershipId;
};

/**
 * v2 addresses privileges by id; another organization's privilege is a plain 404. The privilege
 * and its project come in one query; a cached ability needs no other.
 */
export const requirePrivilegeById = async (ctx: RequestContext, id: string) => {
  const loaded = isUuid(id) ? await findPrivilegeWithProject(ctx.deps.db, ctx.actor.orgId, id) : undefined;
  if (!loaded) throw new NotFoundError(`Privilege with id ${id} not found`);
  const { p_org_id, p_type, p_permission_version, ...row } = loaded;
  const project = { id: row.project_id, org_id: p_org_id, type: p_type, permission_version: p_permission_version };
  return { row, permission: await getProjectPermissionForRow(ctx, project) };
};

const changingPermissions = <T>(
  ctx: RequestContext,
  projectId: string,
  write: (trx: RequestContext["deps"]["db"]) => Promise<T>,
) =>
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
 * An approved access request's privilege for an identity, written in the approval's transaction
 * (which has bumped the project's permission version first).
 */
export const grantRequestedIdentityPrivilege = (
  trx: Tx,
  input: {
    projectId: string;
    identityId: string;
    membershipId: string;
    rules: PermissionRule[];
    window: PrivilegeWindow;
    requestId: string;
  },
) =>
  insertPrivilege(trx, {
    ...input.window,
    slug: `requested-privilege-${generatePrivilegeSlug()}`,
    membership_id: input.membershipId,
    project_id: input.projectId,
    identity_id: input.identityId,
    permissions: input.rules,
    access_request_id: input.requestId,
  });

/** Revoking a request: its privilege goes (the caller bumps the permission version first). */
export const revokeRequestedIdentityPrivilege = (trx: Tx, requestId: string) =>
  deletePrivilegeOfRequest(trx, requestId);

/** The identity privileges approved requests granted. */
export const listRequestedIdentityPrivileges = (db: Database, requestIds: readonly string[]) =>
  listPrivilegesOfRequests(db, requestIds);

export const createPrivilege = async (
  ctx: RequestContext,
  permission: ProjectPermission<ProjectKey>,
  input: { identityId: string; slug?: string; rules: PermissionRule[]; timing: PrivilegeTiming },
) => {
  const projectId = permission.project.id;
  assertCan(permission.ability, "edit", "identity", { identityId: input.identityId });
  const target = await loadTarget(ctx, projectId, input.identityId);
  assertWithinBoundary(permission.ability, [...target.rules, ...input.rules], "Failed to create additional privileges");
  const window = windowOf(input.timing);
  for (let attempt = 1; ; attempt++) {
    const slug = input.slug ?? generatePrivilegeSlug();
    try {
      return await changingPermissions(ctx, projectId, async (trx) => {
        const row = await insertPrivilege(trx, {
          ...window,
          slug,
          membership_id: target.membershipId,
          project_id: projectId,
          identity_id: input.identityId,
          permissions: input.rules,
        });
        noteAudit(ctx, { metadata: { privilegeId: row.id, identityId: input.identityId, slug } });
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
  row: PrivilegeRow,
  input: { slug?: string; rules?: PermissionRule[]; window?: PrivilegeWindow },
) => {
  assertCan(permission.ability, "edit", "identity", { identityId: row.identity_id });
  assertNotRequested(row);
  const target = await loadTarget(ctx, row.project_id, row.identity_id);
  // The privilege's stored rules count even while it is inactive: re-timing an expired privilege
  // would otherwise revive rules the caller does not hold.
  const granted = input.rules ?? (row.permissions as PermissionRule[]);
  noteAudit(ctx, { metadata: { privilegeId: row.id, identityId: row.identity_id, slug: input.slug ?? row.slug } });
  assertWithinBoundary(permission.ability, [...target.rules, ...granted], "Failed to update additional privileges");
  try {
    return await changingPermissions(ctx, row.project_id, (trx) =>
      updatePrivilegeRow(trx, row.id, { slug: input.slug, permissions: input.rules, ...input.window }),
    );
  } catch (error) {
    if (isUniqueViolation(error)) throw new BadRequestError("Additional privilege with provided slug already exists");
    throw error;
  }
};

/** Removing a privilege is changing the identity: the caller must hold what the target holds. */
export const deletePrivilege = async (
  ctx: RequestContext,
  permission: ProjectPermission<ProjectKey>,
  row: PrivilegeRow,
) => {
  assertCan(permission.ability, "edit", "identity", { identityId: row.identity_id });
  assertNotRequested(row);
  await assertTargetMember(ctx, row.project_id, row.identity_id);
  const target = await loadIdentityProjectRules(ctx.deps.db, row.project_id, row.identity_id);
  assertWithinBoundary(
    permission.ability,
    [...(target?.rules ?? []), ...(row.permissions as PermissionRule[])],
    "Failed to delete additional privileges",
  );
  noteAudit(ctx, { metadata: { privilegeId: row.id, identityId: row.identity_id, slug: row.slug } });
  await changingPermissions(ctx, row.project_id, (trx) => deletePrivilegeRow(trx, row.id));
  return row;
};
