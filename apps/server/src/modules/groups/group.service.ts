import { inTransaction } from "../../db/transaction";
import type { Database } from "../../db/database";
import { randomBytes } from "node:crypto";
import { noteAudit, type RequestContext } from "../../context";
import { isUniqueViolation, isUuid } from "../../db/errors";
import { BadRequestError, ForbiddenError, NotFoundError } from "../../errors";
import { isBuiltInOrgRole, orgRoleCovers } from "../../permissions";
import { orgAbilityOf } from "../authz/org-access";
import { assertCan } from "../authz/guard";
import { bumpPermissionVersionForGroup } from "../authz/permission-version";
import { toGroupDto } from "./group.dto";
import {
  deleteGroupRow,
  findGroupByName,
  findGroupInOrg,
  findGroupsBySlugs,
  insertGroup,
  listGroups,
  updateGroupRow,
  type GroupRow,
} from "./group.repository";

/** An org group of the caller's organization; another organization's group is not found. */
export const requireGroup = async (
  ctx: RequestContext,
  groupId: string,
  message = `Failed to find group with ID ${groupId}`,
): Promise<GroupRow> => {
  const group = isUuid(groupId) ? await findGroupInOrg(ctx.deps.db, ctx.actor.orgId, groupId) : undefined;
  if (!group) throw new NotFoundError(message);
  return group;
};

/** Group org roles are built in; nobody hands a group a role above their own. */
const assertGrantableRole = (ctx: RequestContext, role: string) => {
  if (!isBuiltInOrgRole(role)) throw new BadRequestError(`Failed to find role with slug ${role}`);
  if (!orgRoleCovers(ctx.actor.orgRole, role)) throw new ForbiddenError("Failed to create a more privileged group");
};

/** name-xxxx, lower-case and hyphenated, within the 5..36 slug bounds. */
export const slugFromName = (name: string) => {
  const base = name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 27);
  return `${base || "group"}-${randomBytes(4).toString("hex")}`;
};

const slugTaken = (slug: string) =>
  new BadRequestError(`Failed to create group with slug '${slug}'. Group with the same slug already exists`);

const nameTaken = (action: "create" | "update", name: string) =>
  new BadRequestError(`Failed to ${action} group with name '${name}'. Group with the same name already exists`);
/** The name is checked first (the reference's order of errors); the index settles parallel creates and renames. */
const NAME_KEY = "groups_org_id_name_key";

export const createGroup = async (ctx: RequestContext, body: { name: string; slug?: string; role: string }) => {
  assertCan(orgAbilityOf(ctx.actor), "create", "groups");
  assertGrantableRole(ctx, body.role);
  if (await findGroupByName(ctx.deps.db, ctx.actor.orgId, body.name)) {
    throw nameTaken("create", body.name);
  }
  const slug = body.slug ?? slugFromName(body.name);
  try {
    const row = await inTransaction(ctx, async (trx) => {
      const inserted = await insertGroup(trx, { org_id: ctx.actor.orgId, name: body.name, slug, role: body.role });
      noteAudit(ctx, { metadata: { groupId: inserted.id, slug } });
      return inserted;
    });
    return toGroupDto(row);
  } catch (error) {
    if (isUniqueViolation(error, NAME_KEY)) throw nameTaken("create", body.name);
    if (isUniqueViolation(error)) throw slugTaken(slug);
    throw error;
  }
};

export const listOrgGroups = async (ctx: RequestContext) => {
  assertCan(orgAbilityOf(ctx.actor), "read", "groups");
  return (await listGroups(ctx.deps.db, ctx.actor.orgId)).map(toGroupDto);
};

export const getGroup = async (ctx: RequestContext, groupId: string) => {
  assertCan(orgAbilityOf(ctx.actor), "read", "groups");
  return {
    ...toGroupDto(await requireGroup(ctx, groupId, `Cannot find group with ID ${groupId}`)),
    customRoleSlug: null,
  };
};

export const updateGroup = async (
  ctx: RequestContext,
  groupId: string,
  body: { name?: string; slug?: string; role?: string },
) => {
  assertCan(orgAbilityOf(ctx.actor), "edit", "groups");
  const group = await requireGroup(ctx, groupId);
  if (body.role !== undefined) {
    // Both the current and the new role must be within the actor's reach.
    assertGrantableRole(ctx, group.role);
    assertGrantableRole(ctx, body.role);
  }
  if (body.name !== undefined) {
    const sameName = await findGroupByName(ctx.deps.db, ctx.actor.orgId, body.name);
    if (sameName && sameName.id !== group.id) {
      throw nameTaken("update", body.name);
    }
  }
  try {
    const updated = await inTransaction(ctx, async (trx) => {
      await bumpPermissionVersionForGroup(trx, group.id);
      return updateGroupRow(trx, group.id, { name: body.name, slug: body.slug, role: body.role });
    });
    return toGroupDto(updated);
  } catch (error) {
    if (isUniqueViolation(error, NAME_KEY)) throw nameTaken("update", body.name ?? group.name);
    if (isUniqueViolation(error)) throw slugTaken(body.slug ?? group.slug);
    throw error;
  }
};

/** Its memberships (org members, projects) go with it; every project it was in sees the change. */
export const deleteGroup = async (ctx: RequestContext, groupId: string) => {
  assertCan(orgAbilityOf(ctx.actor), "delete", "groups");
  const group = await requireGroup(ctx, groupId);
  await inTransaction(ctx, async (trx) => {
    await bumpPermissionVersionForGroup(trx, group.id);
    await deleteGroupRow(trx, group.id);
  });
  return toGroupDto(group);
};

// Used by project templates to resolve their members.
/** The organization's groups among these slugs (for template members). */
export const lookupOrgGroupsBySlugs = (db: Database, orgId: string, slugs: string[]) =>
  findGroupsBySlugs(db, orgId, slugs);
