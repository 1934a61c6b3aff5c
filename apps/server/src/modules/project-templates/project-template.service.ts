import { inTransaction } from "../../db/transaction";
import {
  DEFAULT_PROJECT_TEMPLATE_ID,
  ProjectTypeSchema,
  invalidPermissionCombination,
  type CreateProjectTemplateBody,
  type ProjectType,
  type UpdateProjectTemplateBody,
} from "@keyward/contract";
import { noteAudit, type RequestContext } from "../../context";
import { isUniqueViolation, isUuid } from "../../db/errors";
import type { TemplateRoleRow } from "../../db/tables/project-structure";
import { BadRequestError, NotFoundError } from "../../errors";
import { PROJECT_ROLE_RULES, buildAbility, isBuiltInProjectRole, type PermissionRule } from "../../permissions";
import { assertWithinBoundary } from "../authz/boundary";
import { orgAbilityOf } from "../authz/org-access";
import { assertCan } from "../authz/guard";
import { DEFAULT_ENVIRONMENTS } from "../projects/project.service";
import { defaultTemplate, toTemplateDto } from "./project-template.dto";
import { assertRemovedRolesUnused, resolveTemplateMembers } from "./project-template.members";
import {
  deleteTemplateRow,
  findTemplateByName,
  findTemplateInOrg,
  insertTemplate,
  listTemplateMembers,
  listTemplates,
  replaceTemplateMembers,
  updateTemplateRow,
} from "./project-template.repository";

type RoleInput = CreateProjectTemplateBody["roles"][number];

/** Rules arrive normalised (action a list, inverted set); the legacy read combination is a 400. */
const normalizeRoles = (roles: RoleInput[]): TemplateRoleRow[] => {
  const invalid = invalidPermissionCombination(roles.flatMap((r) => r.permissions));
  if (invalid) throw new BadRequestError(invalid);
  return roles.map((role) => ({ name: role.name, slug: role.slug, permissions: role.permissions }));
};

const nameTaken = (name: string) => new BadRequestError(`A project template with the name "${name}" already exists.`);
const notFound = (id: string) => new NotFoundError(`Could not find project template with ID ${id}`);

/**
 * Nobody puts more into a template than they hold. A template only ever applies to a project its
 * applier creates (and so administers), so the author's reach is the project admin rules when
 * they may create projects, and nothing otherwise.
 */
const assertTemplateWithinAuthor = (
  ctx: RequestContext,
  roles: TemplateRoleRow[],
  assigned: string[][],
  message: string,
) => {
  const author = buildAbility(orgAbilityOf(ctx.actor).can("create", "workspace") ? PROJECT_ROLE_RULES.admin! : []);
  const granted = roles.flatMap((r) => r.permissions) as PermissionRule[];
  for (const slug of new Set(assigned.flat()))
    if (isBuiltInProjectRole(slug)) granted.push(...PROJECT_ROLE_RULES[slug]!);
  assertWithinBoundary(author, granted, message);
};

const requireTemplate = async (ctx: RequestContext, templateId: string) => {
  const row = isUuid(templateId) ? await findTemplateInOrg(ctx.deps.db, ctx.actor.orgId, templateId) : undefined;
  if (!row) throw notFound(templateId);
  return row;
};

const loadDto = async (ctx: RequestContext, templateId: string) => {
  const row = await requireTemplate(ctx, templateId);
  return toTemplateDto(row, await listTemplateMembers(ctx.deps.db, [row.id]));
};

const rolesOf = (lists: ({ roles: string[] }[] | null | undefined)[]) =>
  lists.flatMap((list) => (list ?? []).map((m) => m.roles));

export const createProjectTemplate = async (ctx: RequestContext, body: CreateProjectTemplateBody) => {
  assertCan(orgAbilityOf(ctx.actor), "create", "project-templates");
  if (body.environments && body.type !== "secret-manager") {
    throw new BadRequestError("Cannot configure environments for non-SecretManager project templates");
  }
  if (await findTemplateByName(ctx.deps.db, ctx.actor.orgId, body.name)) throw nameTaken(body.name);
  const roles = normalizeRoles(body.roles);
  const members = await resolveTemplateMembers(ctx, roles, body);
  const assigned = rolesOf([body.users, body.groups, body.identities, body.projectManagedIdentities]);
  assertTemplateWithinAuthor(ctx, roles, assigned, "Failed to create project template");
  try {
    const id = await inTransaction(ctx, async (trx) => {
      const row = await insertTemplate(trx, {
        org_id: ctx.actor.orgId,
        name: body.name,
        description: body.description ?? null,
        type: body.type,
        roles,
        environments: body.type === "secret-manager" ? (body.environments ?? DEFAULT_ENVIRONMENTS) : null,
        project_managed_identities: body.projectManagedIdentities.length > 0 ? body.projectManagedIdentities : null,
      });
      await replaceTemplateMembers(trx, row.id, members);
      noteAudit(ctx, { metadata: { templateId: row.id } });
      return row.id;
    });
    return loadDto(ctx, id);
  } catch (error) {
    if (isUniqueViolation(error, "project_templates_org_id_name_key")) throw nameTaken(body.name);
    throw error;
  }
};

/** The built-in default (of each type, or of the one asked for) first, then the organization's own. */
export const listProjectTemplates = async (ctx: RequestContext, type?: ProjectType) => {
  assertCan(orgAbilityOf(ctx.actor), "read", "project-templates");
  const rows = await listTemplates(ctx.deps.db, ctx.actor.orgId, type);
  const members = await listTemplateMembers(
    ctx.deps.db,
    rows.map((r) => r.id),
  );
  const defaults = (type ? [type] : ProjectTypeSchema.options).map((t) => defaultTemplate(ctx.actor.orgId, t));
  return [...defaults, ...rows.map((row) => toTemplateDto(row, members))];
};

export const getProjectTemplate = async (ctx: RequestContext, templateId: string) => {
  assertCan(orgAbilityOf(ctx.actor), "read", "project-templates");
  return loadDto(ctx, templateId);
};

const refuseDefault = (templateId: string, verb: string) => {
  if (templateId === DEFAULT_PROJECT_TEMPLATE_ID)
    throw new BadRequestError(`The default project template cannot be ${verb}`);
};

export const updateProjectTemplate = async (
  ctx: RequestContext,
  templateId: string,
  body: UpdateProjectTemplateBody,
) => {
  assertCan(orgAbilityOf(ctx.actor), "edit", "project-templates");
  refuseDefault(templateId, "updated");
  const row = await requireTemplate(ctx, templateId);
  if (row.type !== "secret-manager" && body.environments) {
    throw new BadRequestError("Cannot configure environments for non-SecretManager project templates");
  }
  if (row.type === "secret-manager" && body.environments === null) {
    throw new BadRequestError("Environments cannot be removed for SecretManager project templates");
  }
  const current = await listTemplateMembers(ctx.deps.db, [row.id]);
  const roles = body.roles ? normalizeRoles(body.roles) : row.roles;
  if (body.roles) {
    const kept = new Set(roles.map((r) => r.slug));
    assertRemovedRolesUnused(
      row.roles.map((r) => r.slug).filter((slug) => !kept.has(slug)),
      {
        users: body.users === undefined ? current.users : [],
        groups: body.groups === undefined ? current.groups : [],
        identities: [
          ...(body.identities === undefined ? current.identities : []),
          ...(body.projectManagedIdentities === undefined ? (row.project_managed_identities ?? []) : []),
        ],
      },
    );
  }
  const members = await resolveTemplateMembers(ctx, roles, body);
  const pmi =
    body.projectManagedIdentities === undefined ? row.project_managed_identities : body.projectManagedIdentities;
  const assigned = rolesOf([
    body.users === undefined ? current.users : body.users,
    body.groups === undefined ? current.groups : body.groups,
    body.identities === undefined ? current.identities : body.identities,
    pmi,
  ]);
  assertTemplateWithinAuthor(ctx, roles, assigned, "Failed to update project template");
  if (
    body.name !== undefined &&
    body.name !== row.name &&
    (await findTemplateByName(ctx.deps.db, ctx.actor.orgId, body.name))
  ) {
    throw nameTaken(body.name);
  }
  try {
    await inTransaction(ctx, async (trx) => {
      await updateTemplateRow(trx, row.id, {
        name: body.name,
        description: body.description,
        roles: body.roles ? roles : undefined,
        environments: body.environments ?? undefined,
        project_managed_identities:
          body.projectManagedIdentities === undefined ? undefined : pmi && pmi.length > 0 ? pmi : null,
      });
      await replaceTemplateMembers(trx, row.id, members);
    });
  } catch (error) {
    if (isUniqueViolation(error, "project_templates_org_id_name_key")) throw nameTaken(body.name!);
    throw error;
  }
  return loadDto(ctx, row.id);
};

export const deleteProjectTemplate = async (ctx: RequestContext, templateId: string) => {
  assertCan(orgAbilityOf(ctx.actor), "delete", "project-templates");
  refuseDefault(templateId, "deleted");
  const dto = await loadDto(ctx, templateId);
  noteAudit(ctx, { metadata: { name: dto.name } });
  await inTransaction(ctx, (trx) => deleteTemplateRow(trx, dto.id));
  return dto;
};
