import type { ActorContext } from "../../context";
import { NotFoundError } from "../../errors";
import type { Ability, PermissionObject } from "../../permissions";
import { getProjectPermission } from "../authz/project-access";

/**
 * The caller's ability in the project that owns a PKI object. The object was looked up first with
 * its project's organization: another tenant's object is the same 404 as a missing one.
 */
export const permissionForOwned = async (
  ctx: ActorContext,
  owned: { project_id: string; org_id: string } | undefined,
  notFoundMessage: string,
) => {
  if (!owned || owned.org_id !== ctx.actor.orgId) throw new NotFoundError(notFoundMessage);
  return getProjectPermission(ctx, owned.project_id, "cert-manager");
};

/** Whether the caller's rules for this action depend on the object, so rows must be checked one by one. */
export const dependsOnObject = (ability: Ability, action: string, subject: string) =>
  ability.rulesFor(action, subject).some((rule) => rule.conditions !== undefined);

/** Keep the rows the caller may see, then page them: totalCount counts what the caller may see. */
export const pageVisible = <T>(
  rows: readonly T[],
  visible: (row: T) => PermissionObject,
  can: (object: PermissionObject) => boolean,
  offset: number,
  limit: number,
) => {
  const allowed = rows.filter((row) => can(visible(row)));
  return { page: allowed.slice(offset, offset + limit), totalCount: allowed.length };
};

/** `%` and `_` in a search term match themselves. */
export const likePattern = (term: string) => `%${term.replace(/[\\%_]/g, (ch) => `\\${ch}`)}%`;

/** PEM blocks joined one per line, empty parts dropped. */
export const joinPem = (...parts: string[]) =>
  parts
    .map((p) => p.trim())
    .filter((p) => p.length > 0)
    .join("\n");
