import { BUILT_IN_PROJECT_ROLES } from "@keyward/contract";
import type { RequestContext } from "../../context";
import type { TemplateManagedIdentityRow, TemplateRoleRow } from "../../db/tables/project-structure";
import { BadRequestError } from "../../errors";
import { orgPeopleAmong } from "../authz/principals";
import { lookupOrgGroupsBySlugs } from "../groups/group.service";
import { findOrgIdentitiesByIds, type ResolvedMembers } from "./project-template.repository";

type MemberInput = {
  users?: { username: string; roles: string[] }[] | null;
  groups?: { groupSlug: string; roles: string[] }[] | null;
  identities?: { identityId: string; roles: string[] }[] | null;
  projectManagedIdentities?: TemplateManagedIdentityRow[] | null;
};

const roleMessage = (kind: string, who: string, role: string) =>
  `${kind} "${who}" references invalid role slug "${role}". Role must be a predefined role or defined in the template roles.`;

const checkRoles = (available: Set<string>, kind: string, entries: { who: string; roles: string[] }[]) => {
  for (const entry of entries) {
    const invalid = entry.roles.find((role) => !available.has(role));
    if (invalid !== undefined) throw new BadRequestError(roleMessage(kind, entry.who, invalid));
  }
};

/**
 * Reference §4.2 rules for the member lists, in its order: users must be organization members,
 * groups and identities must exist in the organization, every role must be built in or defined
 * by the template, project-managed identity names unique regardless of case. `null` clears a
 * list; undefined leaves it as it is.
 */
export const resolveTemplateMembers = async (
  ctx: RequestContext,
  roles: TemplateRoleRow[],
  input: MemberInput,
): Promise<Partial<ResolvedMembers>> => {
  const db = ctx.deps.db;
  const orgId = ctx.actor.orgId;
  const available = new Set<string>([...BUILT_IN_PROJECT_ROLES, ...roles.map((r) => r.slug)]);
  const resolved: Partial<ResolvedMembers> = {};

  if (input.users !== undefined) {
    const users = input.users ?? [];
    const found = new Map(
      (
        await orgPeopleAmong(
          db,
          orgId,
          users.map((u) => u.username),
        )
      ).map((u) => [u.username, u]),
    );
    const missing = users.filter((u) => !found.has(u.username));
    if (missing.length > 0) {
      throw new BadRequestError(
        `The following users are not members of this organization: ${missing.map((u) => u.username).join(", ")}`,
      );
    }
    checkRoles(
      available,
      "User",
      users.map((u) => ({ who: u.username, roles: u.roles })),
    );
    resolved.users = users.map((u) => ({ orgMembershipId: found.get(u.username)!.org_membership_id, roles: u.roles }));
  }

  if (input.groups !== undefined) {
    const groups = input.groups ?? [];
    const found = new Map(
      (
        await lookupOrgGroupsBySlugs(
          db,
          orgId,
          groups.map((g) => g.groupSlug),
        )
      ).map((g) => [g.slug, g]),
    );
    const missing = groups.filter((g) => !found.has(g.groupSlug));
    if (missing.length > 0) {
      throw new BadRequestError(
        `The following groups do not exist in this organization: ${missing.map((g) => g.groupSlug).join(", ")}`,
      );
    }
    checkRoles(
      available,
      "Group",
      groups.map((g) => ({ who: g.groupSlug, roles: g.roles })),
    );
    resolved.groups = groups.map((g) => ({ groupId: found.get(g.groupSlug)!.id, roles: g.roles }));
  }

  if (input.identities !== undefined) {
    const identities = input.identities ?? [];
    const found = new Set(
      (
        await findOrgIdentitiesByIds(
          db,
          orgId,
          identities.map((i) => i.identityId),
        )
      ).map((i) => i.id),
    );
    const missing = identities.filter((i) => !found.has(i.identityId));
    if (missing.length > 0) {
      throw new BadRequestError(
        `The following identities do not exist in this organization: ${missing.map((i) => i.identityId).join(", ")}`,
      );
    }
    checkRoles(
      available,
      "Identity",
      identities.map((i) => ({ who: i.identityId, roles: i.roles })),
    );
    resolved.identities = identities.map((i) => ({ identityId: i.identityId, roles: i.roles }));
  }

  if (input.projectManagedIdentities) {
    const names = input.projectManagedIdentities.map((i) => i.name.toLowerCase());
    if (new Set(names).size !== names.length)
      throw new BadRequestError("Project-managed identity names must be unique within the template");
    checkRoles(
      available,
      "Identity",
      input.projectManagedIdentities.map((i) => ({ who: i.name, roles: i.roles })),
    );
  }
  return resolved;
};

/** A role the template's members still use cannot be dropped from it. */
export const assertRemovedRolesUnused = (
  removed: string[],
  usage: { users: { roles: string[] }[]; groups: { roles: string[] }[]; identities: { roles: string[] }[] },
) => {
  for (const slug of removed) {
    const count = (list: { roles: string[] }[]) => list.filter((m) => m.roles.includes(slug)).length;
    const users = count(usage.users);
    const groups = count(usage.groups);
    const identities = count(usage.identities);
    const parts = [
      users > 0 ? `${users} user${users === 1 ? "" : "s"}` : undefined,
      groups > 0 ? `${groups} group${groups === 1 ? "" : "s"}` : undefined,
      identities > 0 ? `${identities} identit${identities === 1 ? "y" : "ies"}` : undefined,
    ].filter((p): p is string => p !== undefined);
    if (parts.length > 0)
      throw new BadRequestError(`Cannot remove role "${slug}" because it is assigned to ${parts.join(", ")}`);
  }
};
