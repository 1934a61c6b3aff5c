import { noteAuditProject, type Actor, type ActorContext } from "../../context";
import type { ProjectType } from "@keyward/contract";
import type { Database } from "../../db/database";
import { isUuid } from "../../db/errors";
import { BadRequestError, ForbiddenError, NotFoundError } from "../../errors";
import { createInterner } from "../../lib/intern";
import {
  renderRules,
  rulesUseAuthTemplates,
  rulesUseTemplates,
  type Ability,
  type PermissionRule,
} from "../../permissions";
import { abilityKeyOf, abilityOfGrants, toGrants } from "./grants";
import {
  findProjectById,
  findProjectByIdBatched,
  findProjectBySlug,
  findUserEmail,
  loadProjectAccessById,
  loadProjectAccessByIdBatched,
  loadProjectAccessBySlug,
  loadTemplateContext,
  type GrantsJson,
  type ProjectRow,
} from "./project-access.repository";

export { PROJECT_COLUMNS, type ProjectRow } from "./project-access.repository";

/** What an ability lookup needs of a project: hot paths select only these columns. */
export type ProjectKey = Pick<ProjectRow, "id" | "org_id" | "type" | "permission_version">;

export type ProjectPermission<P extends ProjectKey = ProjectRow> = {
  project: P;
  membershipId: string;
  ability: Ability;
};

/** A temporary grant counts only inside its window: start <= now < end. */
export const isActiveGrant = (
  grant: {
    is_temporary: boolean | null;
    temporary_access_start_time: Date | string | null;
    temporary_access_end_time: Date | string | null;
  },
  now = Date.now(),
) => {
  if (!grant.is_temporary) return true;
  const start = grant.temporary_access_start_time
    ? new Date(grant.temporary_access_start_time).getTime()
    : Number.NEGATIVE_INFINITY;
  const end = grant.temporary_access_end_time
    ? new Date(grant.temporary_access_end_time).getTime()
    : Number.NEGATIVE_INFINITY;
  return start <= now && now < end;
};

const notAMember = (projectId: string) =>
  new ForbiddenError(
    `You are not a member of this project with ID ${projectId}. Please assign this identity to the project with the appropriate permissions, then try again.`,
    "ProjectMembershipNotFound",
  );

const assertProjectOfActor = <P extends ProjectRow>(
  project: P | undefined,
  actor: Actor,
  notFoundMessage: string,
): P => {
  // Another organization's project is indistinguishable from a missing one.
  if (!project || project.org_id !== actor.orgId) throw new NotFoundError(notFoundMessage);
  return project;
};

const assertType = (project: ProjectKey, requiredType?: ProjectType) => {
  if (requiredType && project.type !== requiredType) {
    throw new BadRequestError(
      `The project is of type ${project.type}. Operations of type ${requiredType} are not allowed.`,
    );
  }
};

/** What cached (holder, project) entries share: the project's permission version, the grants' fingerprint. */
const sharedText = createInterner();

/** A shared ability still current at `now`, rebuilt (for every holder) once a temporary grant starts or ends. */
const currentAbility = (deps: ActorContext["deps"], abilityKey: string, now: number) => {
  const shared = deps.abilityCache.getAbility(abilityKey);
  if (!shared || now < shared.validUntil) return shared;
  const rebuilt = { grants: shared.grants, ...abilityOfGrants(shared.grants, now) };
  deps.abilityCache.setAbility(abilityKey, rebuilt);
  return rebuilt;
};

/**
 * The ability of freshly loaded grants, cached at the version they were read at; non-members get a
 * 403. Holders whose grants are the same share one built ability (`abilityKeyOf`), so a miss whose
 * grant set was seen before builds nothing. Identity templates in the rules are filled in here, and
 * an ability built from filled-in rules is shared only by holders whose values are the same.
 */
const freshAbility = async <P extends ProjectKey>(
  { deps, actor }: ActorContext,
  project: P,
  grants: GrantsJson,
  version = project.permission_version,
): Promise<ProjectPermission<P>> => {
  const membershipId = grants.membershipId ?? grants.groupMembershipId;
  if (membershipId === null) {
    // Non-membership is never cached: memberships may be added without a version bump.
    deps.abilityCache.delete(actor.id, project.id);
    throw notAMember(project.id);
  }
  // Grants without templates: the key of the grants alone (never that of grants with templates).
  let abilityKey = abilityKeyOf(grants);
  let tokenId: string | undefined;
  let shared = currentAbility(deps, abilityKey, Date.now());
  if (!shared) {
    let loaded = toGrants(grants);
    const rules = loaded.flatMap((grant) => grant.rules);
    if (rulesUseTemplates(rules)) {
      const perToken = rulesUseAuthTemplates(rules);
      const context = await loadTemplateContext(deps.db, actor, perToken);
      if (perToken) tokenId = actor.tokenId;
      abilityKey = abilityKeyOf(grants, context);
      shared = currentAbility(deps, abilityKey, Date.now());
      if (!shared) loaded = loaded.map((grant) => ({ ...grant, rules: renderRules(grant.rules, context) }));
    }
    if (!shared) {
      shared = { grants: loaded, ...abilityOfGrants(loaded) };
      deps.abilityCache.setAbility(abilityKey, shared);
    }
  }
  deps.abilityCache.set(actor.id, project.id, {
    version: sharedText(version),
    membershipId,
    abilityKey: sharedText(abilityKey),
    tokenId,
  });
  return { project, membershipId, ability: shared.ability };
};

/** A cached ability still valid for this project row, rebuilt locally once a temporary grant starts or ends. */
const cachedAbility = <P extends ProjectKey>(
  { deps, actor }: ActorContext,
  project: P,
): ProjectPermission<P> | undefined => {
  const entry = deps.abilityCache.get(actor.id, project.id);
  if (!entry || entry.version !== project.permission_version) return undefined;
  // Rules that read `identity.auth` were filled in for one token.
  if (entry.tokenId !== undefined && entry.tokenId !== actor.tokenId) return undefined;
  // An ability evicted from the shared cache is a miss: the grants are read again.
  const shared = currentAbility(deps, entry.abilityKey, deps.clock.now());
  if (!shared) return undefined;
  return { project, membershipId: entry.membershipId, ability: shared.ability };
};

/** A project of an organization by slug; another organization's is none. */
export const findProjectOfOrgBySlug = (db: Database, orgId: string, slug: string) => findProjectBySlug(db, orgId, slug);

/** A project by id, of any organization: the caller compares its organization with the actor's. */
export const findProjectRow = (db: Database, projectId: string) => findProjectById(db, projectId);

export const resolveProject = async (db: Database, actor: Actor, projectId: string) =>
  assertProjectOfActor(
    isUuid(projectId) ? await findProjectById(db, projectId) : undefined,
    actor,
    `Project with ${projectId} not found`,
  );

export const resolveProjectBySlug = async (db: Database, actor: Actor, slug: string) =>
  assertProjectOfActor(await findProjectBySlug(db, actor.orgId, slug), actor, `Project with slug ${slug} not found`);

/**
 * The actor's ability in a project already looked up: no query while the
 * cached ability is current, else one that loads every grant.
 */
export const getProjectPermissionForRow = async <P extends ProjectKey>(
  ctx: ActorContext,
  project: P,
  requiredType?: ProjectType,
  prefetched?: PrefetchedAccess,
): Promise<ProjectPermission<P>> => {
  assertType(project, requiredType);
  noteAuditProject(ctx, project.id);
  const cached = cachedAbility(ctx, project);
  if (cached) return cached;
  const row = await (prefetched?.projectId === project.id
    ? prefetched.pending
    : loadProjectAccessByIdBatched(ctx.deps.db, project.id, ctx.actor));
  if (!row) throw new NotFoundError(`Project with ${project.id} not found`);
  return freshAbility(ctx, project, row.grants, row.permission_version);
};

/**
 * The project and the actor's ability in it. One round trip either way: the project row alone
 * when an ability is cached (a bumped version then costs a second), else project and grants together.
 */
export const getProjectPermission = async (ctx: ActorContext, projectId: string, requiredType?: ProjectType) => {
  const { deps, actor } = ctx;
  const notFound = `Project with ${projectId} not found`;
  if (!isUuid(projectId)) throw new NotFoundError(notFound);
  if (deps.abilityCache.get(actor.id, projectId)) {
    return getProjectPermissionForRow(
      ctx,
      assertProjectOfActor(await findProjectByIdBatched(deps.db, projectId), actor, notFound),
      requiredType,
    );
  }
  const { grants, ...project } = assertProjectOfActor(
    await loadProjectAccessByIdBatched(deps.db, projectId, actor),
    actor,
    notFound,
  );
  assertType(project, requiredType);
  noteAuditProject(ctx, project.id);
  return freshAbility(ctx, project, grants);
};

/** The actor's grants in a project, being loaded since before the project row was fetched. */
export type PrefetchedAccess = { projectId: string; pending: ReturnType<typeof loadProjectAccessByIdBatched> };

/**
 * Starts loading the actor's grants in a project when no ability of theirs there is cached, so the
 * load runs beside the caller's own lookup of the project row rather than after it; hand the result
 * to `getProjectPermissionForFetchedRow`, which uses it only on a miss (the grants then come with
 * the permission version they were read at, as a load of its own would). `projectId` must be a UUID.
 */
export const prefetchProjectAccess = (
  { deps, actor }: ActorContext,
  projectId: string,
): PrefetchedAccess | undefined => {
  if (deps.abilityCache.get(actor.id, projectId)) return undefined;
  const pending = loadProjectAccessByIdBatched(deps.db, projectId, actor);
  // A load left unused (the ability was cached meanwhile) must not fail the process; a used one is awaited.
  pending.catch(() => undefined);
  return { projectId, pending };
};

/**
 * getProjectPermission for a project row the caller fetched itself, together with its own data in
 * one round trip: the same 404 for a missing or foreign project, the same type and ability checks.
 */
export const getProjectPermissionForFetchedRow = async <P extends ProjectKey>(
  ctx: ActorContext,
  projectId: string,
  project: P | undefined,
  requiredType?: ProjectType,
  prefetched?: PrefetchedAccess,
): Promise<ProjectPermission<P>> => {
  if (!project || project.org_id !== ctx.actor.orgId) throw new NotFoundError(`Project with ${projectId} not found`);
  return getProjectPermissionForRow(ctx, project, requiredType, prefetched);
};

export const getProjectPermissionBySlug = async (ctx: ActorContext, slug: string, requiredType?: ProjectType) => {
  const { deps, actor } = ctx;
  const notFound = `Project with slug ${slug} not found`;
  const knownId = deps.projectIdCache.get(actor.orgId, slug);
  if (knownId && deps.abilityCache.get(actor.id, knownId)) {
    const project = assertProjectOfActor(await findProjectBySlug(deps.db, actor.orgId, slug), actor, notFound);
    deps.projectIdCache.set(actor.orgId, slug, project.id);
    return getProjectPermissionForRow(ctx, project, requiredType);
  }
  const { grants, ...project } = assertProjectOfActor(
    await loadProjectAccessBySlug(deps.db, actor.orgId, slug, actor),
    actor,
    notFound,
  );
  deps.projectIdCache.set(actor.orgId, slug, project.id);
  assertType(project, requiredType);
  noteAuditProject(ctx, project.id);
  return freshAbility(ctx, project, grants);
};

/**
 * Another holder's (an identity's or a person's) active rules in a project, always read fresh (used
 * before writing grants): undefined when it is no member at all; `membershipId` is its direct
 * membership, if any.
 */
export const loadHolderProjectRules = async (
  db: Database,
  projectId: string,
  holder: { type: "user" | "identity"; id: string },
): Promise<{ membershipId: string | null; rules: PermissionRule[] } | undefined> => {
  const row = await loadProjectAccessById(db, projectId, holder);
  const grants = row?.grants;
  if (!grants || (grants.membershipId === null && grants.groupMembershipId === null)) return undefined;
  return { membershipId: grants.membershipId, rules: abilityOfGrants(toGrants(grants)).rules };
};

/**
 * Another member's ability in a project as it is now (a change request's committer, judged when their
 * change is merged, an access request's approver when the last approval arrives), never cached;
 * undefined when they are no longer a member. Templates that read a login's claims see none: the
 * holder is not logged in here. Inside a transaction, pass it as `db`.
 */
export const abilityOfMember = async (
  deps: ActorContext["deps"],
  projectId: string,
  holder: { type: "user" | "identity"; id: string },
  db: Database = deps.db,
): Promise<Ability | undefined> => {
  const row = await loadProjectAccessById(db, projectId, holder);
  const membershipId = row?.grants.membershipId ?? row?.grants.groupMembershipId ?? null;
  if (!row || membershipId === null) return undefined;
  let loaded = toGrants(row.grants);
  const rules = loaded.flatMap((grant) => grant.rules);
  if (rulesUseTemplates(rules)) {
    const name = holder.type === "user" ? await findUserEmail(db, holder.id) : undefined;
    const actor = { ...holder, name: name ?? "", tokenId: "" } as unknown as Actor;
    const context = await loadTemplateContext(db, actor, false);
    loaded = loaded.map((grant) => ({ ...grant, rules: renderRules(grant.rules, context) }));
  }
  return abilityOfGrants(loaded, deps.clock.now()).ability;
};
