import type { Tx } from "../../db/transaction";
import type { ProjectType } from "@keyward/contract";
import type { RequestContext } from "../../context";
import { BadRequestError } from "../../errors";
import { isBuiltInProjectRole } from "../../permissions";
import { orgAbilityOf } from "../authz/org-access";
import { assertCan } from "../authz/guard";
import { bumpPermissionVersion } from "../authz/permission-version";
import { addGroupInTransaction } from "../groups/project-group.service";
import { addIdentityInTransaction } from "../identities/identity.service";
import type { RoleGrant } from "../authz/membership-roles";
import { addMemberInTransaction } from "../projects/membership.service";
import type { ResolvedTemplate } from "../projects/project-template-hook";
import {
  findTemplateByName,
  insertTemplateRole,
  insertUserProjectMembership,
  listTemplateMembers,
  type TemplateMembers,
  type TemplateRow,
} from "./project-template.repository";

/** Role slugs to grants; custom slugs point at the roles the template just created in the project. */
const grantsFor = (slugs: string[], customRoleIds: Map<string, string>): RoleGrant[] => {
  const grants: RoleGrant[] = [];
  for (const slug of new Set(slugs)) {
    if (isBuiltInProjectRole(slug)) grants.push({ role: slug, customRoleId: null, isTemporary: false });
    else if (customRoleIds.has(slug))
      grants.push({ role: "custom", customRoleId: customRoleIds.get(slug)!, isTemporary: false });
  }
  return grants.length > 0 ? grants : [{ role: "no-access", customRoleId: null, isTemporary: false }];
};

/**
 * Everything but the environments (which the project service creates): the template's custom
 * roles, then memberships of its users, groups and identities, then its project-managed identities.
 * Runs inside the project's creation transaction, so a failure leaves no project behind.
 */
const applyTemplate = async (
  ctx: RequestContext,
  trx: Tx,
  projectId: string,
  row: TemplateRow,
  members: TemplateMembers,
) => {
  await bumpPermissionVersion(trx, [projectId]);
  const customRoleIds = new Map<string, string>();
  for (const role of row.roles) {
    const created = await insertTemplateRole(trx, projectId, role);
    customRoleIds.set(role.slug, created.id);
  }
  for (const identity of members.identities) {
    // The creator is already the project's admin.
    if (identity.identity_id === ctx.actor.id) continue;
    await addMemberInTransaction(trx, projectId, identity.identity_id, grantsFor(identity.roles, customRoleIds));
  }
  for (const group of members.groups) {
    await addGroupInTransaction(trx, projectId, group.group_id, grantsFor(group.roles, customRoleIds));
  }
  for (const user of members.users) {
    await insertUserProjectMembership(trx, projectId, user.user_id, grantsFor(user.roles, customRoleIds));
  }
  for (const managed of row.project_managed_identities ?? []) {
    const { id } = await addIdentityInTransaction(trx, {
      org_id: ctx.actor.orgId,
      project_id: projectId,
      name: managed.name,
      org_role: "no-access",
      has_delete_protection: false,
    });
    await addMemberInTransaction(trx, projectId, id, grantsFor(managed.roles, customRoleIds));
  }
};

/**
 * `template: <name>` on project creation resolves here (the built-in `default` never reaches it);
 * AppDeps carries it as `hooks.resolveProjectTemplate`, so projects need not import this module.
 */
export const resolveTemplate = async (
  ctx: RequestContext,
  name: string,
  type: ProjectType,
): Promise<ResolvedTemplate | undefined> => {
  assertCan(orgAbilityOf(ctx.actor), "read", "project-templates");
  const row = await findTemplateByName(ctx.deps.db, ctx.actor.orgId, name);
  if (!row) return undefined;
  if (row.type !== type) {
    throw new BadRequestError(
      `Project template "${name}" is of type ${row.type} and cannot be used for a ${type} project`,
    );
  }
  const members = await listTemplateMembers(ctx.deps.db, [row.id]);
  return {
    id: row.id,
    environments: row.environments,
    apply: (applyCtx: RequestContext, trx: Tx, projectId: string) =>
      applyTemplate(applyCtx, trx, projectId, row, members),
  };
};
