import { noteAudit, type ChangeTarget, type RequestContext } from "../../context";
import { BadRequestError, PermissionDeniedError } from "../../errors";
import { matchConditions, type Ability, type PermissionObject } from "../../permissions";
import { getProjectPermission, getProjectPermissionBySlug } from "../authz/project-access";
import { SECRET_MANAGER } from "../folders/folder.service";

/** What a permission check on one secret is evaluated against. */
export const secretObject = (
  environment: string,
  secretPath: string,
  secretName: string,
  tagSlugs: readonly string[],
) => ({ environment, secretPath, secretName, secretTags: [...tagSlugs] }) satisfies PermissionObject;

/** The new action or the legacy `read` (DescribeAndReadValue) grants a description. */
export const canDescribe = (ability: Ability, object: PermissionObject) =>
  ability.can("describeSecret", "secrets", object) || ability.can("read", "secrets", object);

export const canReadValue = (ability: Ability, object: PermissionObject) =>
  ability.can("readValue", "secrets", object) || ability.can("read", "secrets", object);

const deniedDetails = (ability: Ability, action: string) =>
  ability.rulesFor(action, "secrets").map((rule) => ({
    action: rule.action,
    inverted: rule.inverted,
    subject: rule.subject,
    ...(rule.conditions ? { conditions: rule.conditions } : {}),
  }));

export const denied = (ability: Ability, action: string) =>
  new PermissionDeniedError(action, "secrets", deniedDetails(ability, action));

/** A list or get needs some description right on secrets at all, whatever its conditions. */
export const assertMayDescribeSomeSecrets = (ability: Ability) => {
  if (!ability.can("describeSecret", "secrets") && !ability.can("read", "secrets"))
    throw denied(ability, "describeSecret");
};

export const assertCanDescribe = (ability: Ability, object: PermissionObject) => {
  if (!canDescribe(ability, object)) throw denied(ability, "describeSecret");
};

export const assertCanReadValue = (ability: Ability, object: PermissionObject) => {
  if (!canReadValue(ability, object)) throw denied(ability, "readValue");
};

export const assertSecretAction = (
  ability: Ability,
  action: "create" | "edit" | "delete",
  object: PermissionObject,
) => {
  if (!ability.can(action, "secrets", object)) throw denied(ability, action);
};

/**
 * A write is judged on what it stores: the name and tags of the state as it will be written, in the
 * folder it will be written to. Checking a name or tags taken from elsewhere in the request would let
 * a caller store under something it was never checked against.
 */
export const assertMayStore = (
  ability: Ability,
  action: "create" | "edit",
  at: { environment: string; secretPath: string },
  state: { key: string; tags: readonly { slug: string }[] },
) =>
  assertSecretAction(
    ability,
    action,
    secretObject(
      at.environment,
      at.secretPath,
      state.key,
      state.tags.map((t) => t.slug),
    ),
  );

/**
 * May the caller `action` some secret in this folder at all (of this name, when one is given)? Decided
 * before any secret there is read, from what the request itself names: an allow rule counts when its
 * conditions on the folder (and the name) hold — those on tags or metadata might hold for some secret —
 * and a forbid rule only when it has no other conditions.
 */
export const mayActIn = (
  ability: Ability,
  action: "create" | "edit" | "delete" | "describeSecret" | "read",
  at: { environment: string; secretPath: string; secretName?: string },
) => {
  const known: PermissionObject = { environment: at.environment, secretPath: at.secretPath };
  if (at.secretName !== undefined) known.secretName = at.secretName;
  const isKnown = (field: string) => field in known;
  let allowed = false;
  for (const rule of ability.rulesFor(action, "secrets")) {
    const fields = Object.entries(rule.conditions ?? {});
    const onKnown = Object.fromEntries(fields.filter(([field]) => isKnown(field)));
    if (!matchConditions(onKnown, known)) continue;
    if (!rule.inverted) allowed = true;
    else if (fields.every(([field]) => isKnown(field))) return false;
  }
  return allowed;
};

/**
 * Refuses before a lookup when no secret of this folder (of this name) could be acted on: whether one
 * exists is then not told to someone who may not touch it. The secret's own tags are checked after.
 */
export const assertMayActIn = (
  ability: Ability,
  action: "create" | "edit" | "delete",
  at: { environment: string; secretPath: string; secretName?: string },
) => {
  if (!mayActIn(ability, action, at)) throw denied(ability, action);
};

/** May the caller describe some secret of this folder (the new action or the legacy `read`)? */
export const mayDescribeSomeIn = (ability: Ability, at: { environment: string; secretPath: string }) =>
  mayActIn(ability, "describeSecret", at) || mayActIn(ability, "read", at);

type AuditPlace = { environment?: string; secretPath?: string };

/** Secret events name where they happened, with the request's defaults applied. */
export const notePlace = (ctx: ChangeTarget, place: AuditPlace) => {
  const metadata: Record<string, string> = {};
  if (place.environment !== undefined) metadata.environment = place.environment;
  if (place.secretPath !== undefined) metadata.secretPath = place.secretPath;
  noteAudit(ctx, { metadata });
};

export type ProjectRef = { workspaceId?: string; projectId?: string; workspaceSlug?: string; projectSlug?: string };

/** The project a request names (by id or, on v3, by slug) and the caller's ability in it; undefined when none is named. */
export const findProjectPermissionByRef = async (ctx: RequestContext, ref: ProjectRef & AuditPlace) => {
  notePlace(ctx, ref);
  const id = ref.projectId ?? ref.workspaceId;
  if (id !== undefined) return getProjectPermission(ctx, id, SECRET_MANAGER);
  const slug = ref.workspaceSlug ?? ref.projectSlug;
  if (slug !== undefined) return getProjectPermissionBySlug(ctx, slug, SECRET_MANAGER);
  return undefined;
};

/** Writes name the project by `workspaceId`/`projectSlug` (v3) or `projectId` (v4). */
export const getProjectPermissionByRef = async (ctx: RequestContext, ref: ProjectRef) => {
  const permission = await findProjectPermissionByRef(ctx, ref);
  if (!permission) throw new BadRequestError("You must provide projectSlug or workspaceId");
  return permission;
};

/** Personal secrets are people's: a machine identity owns none, so writes none. */
export const refusePersonal = (actor: { type: string }, type: string, verb: "create" | "delete") => {
  if (type === "personal" && actor.type !== "user")
    throw new BadRequestError(`Must be user to ${verb} personal secret`);
};

/** The person whose personal secrets a read shows in place of the shared ones; none for an identity or when not asked. */
export const personalOwnerOf = (actor: { type: string; id: string }, includePersonalOverrides?: boolean) =>
  actor.type === "user" && includePersonalOverrides !== false ? actor.id : undefined;

/**
 * A personal secret is read only by its owner (no one else's is ever loaded), who always sees its
 * value: describing its key is enough.
 */
export const isPersonal = (secret: { type: string }) => secret.type === "personal";
