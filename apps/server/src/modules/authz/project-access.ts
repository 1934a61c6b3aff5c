import type { ProjectType } from "@keyward/contract";
import type { Actor } from "../../context";
import type { Database } from "../../db/database";
import { isUuid } from "../../db/errors";
import { BadRequestError, ForbiddenError, NotFoundError } from "../../errors";
import { PROJECT_ROLE_RULES, buildAbility, type Ability, type PermissionRule } from "../../permissions";
import { findIdentityMembershipRoles, findProjectById, findProjectBySlug, type ProjectRow } from "./project-access.repository";

export type ProjectPermission = {
  project: ProjectRow;
  membershipId: string;
  ability: Ability;
};

/** A temporary grant counts only inside its window: start <= now < end. */
export const isActiveGrant = (
  grant: { is_temporary: boolean | null; temporary_access_start_time: Date | string | null; temporary_access_end_time: Date | string | null },
  now = Date.now(),
) => {
  if (!grant.is_temporary) return true;
  const start = grant.temporary_access_start_time ? new Date(grant.temporary_access_start_time).getTime() : Number.NEGATIVE_INFINITY;
  const end = grant.temporary_access_end_time ? new Date(grant.temporary_access_end_time).getTime() : Number.NEGATIVE_INFINITY;
  return start <= now && now < end;
};

/** Rules of one identity in one project: its active roles. */
export const loadIdentityProjectRules = async (db: Database, projectId: string, identityId: string) => {
  const rows = await findIdentityMembershipRoles(db, projectId, identityId);
  if (rows.length === 0) return undefined;
  const rules: PermissionRule[] = [];
  for (const row of rows) {
    if (row.role === null || !isActiveGrant({ is_temporary: row.is_temporary, temporary_access_start_time: row.temporary_access_start_time, temporary_access_end_time: row.temporary_access_end_time })) continue;
    if (row.custom_permissions) rules.push(...(row.custom_permissions as PermissionRule[]));
    else rules.push(...(PROJECT_ROLE_RULES[row.role] ?? []));
  }
  return { membershipId: rows[0]!.membership_id, rules };
};

const assertProjectOfActor = (project: ProjectRow | undefined, actor: Actor, notFoundMessage: string): ProjectRow => {
  // Another organization's project is indistinguishable from a missing one.
  if (!project || project.org_id !== actor.orgId) throw new NotFoundError(notFoundMessage);
  return project;
};

const assertType = (project: ProjectRow, requiredType?: ProjectType) => {
  if (requiredType && project.type !== requiredType) {
    throw new BadRequestError(`The project is of type ${project.type}. Operations of type ${requiredType} are not allowed.`);
  }
};

export const resolveProject = async (db: Database, actor: Actor, projectId: string) =>
  assertProjectOfActor(isUuid(projectId) ? await findProjectById(db, projectId) : undefined, actor, `Project with ${projectId} not found`);

export const resolveProjectBySlug = async (db: Database, actor: Actor, slug: string) =>
  assertProjectOfActor(await findProjectBySlug(db, actor.orgId, slug), actor, `Project with slug ${slug} not found`);

/** The actor's ability in a project it belongs to (reference §0.4, §2). */
export const permissionForProject = async (
  db: Database,
  actor: Actor,
  project: ProjectRow,
  requiredType?: ProjectType,
): Promise<ProjectPermission> => {
  assertType(project, requiredType);
  const loaded = await loadIdentityProjectRules(db, project.id, actor.identityId);
  if (!loaded) {
    throw new ForbiddenError(
      `You are not a member of this project with ID ${project.id}. Please assign this identity to the project with the appropriate permissions, then try again.`,
      "ProjectMembershipNotFound",
    );
  }
  return { project, membershipId: loaded.membershipId, ability: buildAbility(loaded.rules) };
};

export const getProjectPermission = async (db: Database, actor: Actor, projectId: string, requiredType?: ProjectType) =>
  permissionForProject(db, actor, await resolveProject(db, actor, projectId), requiredType);

export const getProjectPermissionBySlug = async (db: Database, actor: Actor, slug: string, requiredType?: ProjectType) =>
  permissionForProject(db, actor, await resolveProjectBySlug(db, actor, slug), requiredType);
