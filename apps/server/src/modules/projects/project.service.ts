import { inTransaction } from "../../db/transaction";
import { randomBytes } from "node:crypto";
import type { CreateProjectBody } from "@keyward/contract";
import { noteAudit, type RequestContext } from "../../context";
import { isUniqueViolation } from "../../db/errors";
import { BadRequestError } from "../../errors";
import { packRules } from "../../permissions";
import { orgAbilityOf } from "../authz/org-access";
import { getProjectPermission, getProjectPermissionBySlug } from "../authz/project-access";
import { assertCan } from "../authz/guard";
import { createRootFolder } from "../folders/folder.service";
import { insertMembershipWithRoles } from "./membership.repository";
import { toProjectDto } from "./project.dto";
import {
  deleteProjectRow,
  insertEnvironmentId,
  insertProject,
  listEnvironments,
  listProjectsOfActor,
} from "./project.repository";
import { applyProjectTemplate, resolveProjectTemplate, type ResolvedTemplate } from "./project-template-hook";

export const DEFAULT_ENVIRONMENTS = [
  { name: "Development", slug: "dev", position: 1 },
  { name: "Staging", slug: "staging", position: 2 },
  { name: "Production", slug: "prod", position: 3 },
];

const slugFromName = (name: string) => {
  const base = name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 28);
  return `${base || "project"}-${randomBytes(3).toString("hex")}`;
};

export const createProject = async (ctx: RequestContext, body: CreateProjectBody) => {
  assertCan(orgAbilityOf(ctx.actor), "create", "workspace");
  const template: ResolvedTemplate | undefined = await resolveProjectTemplate(ctx, body.template, body.type);
  const slug = body.slug ?? slugFromName(body.projectName);
  const environments = template?.environments ?? (body.type === "secret-manager" ? DEFAULT_ENVIRONMENTS : []);
  try {
    const projectId = await inTransaction(ctx, async (trx) => {
      const project = await insertProject(trx, {
        org_id: ctx.actor.orgId,
        name: body.projectName,
        slug,
        description: body.projectDescription ?? null,
        type: body.type,
      });
      for (const env of environments) {
        const created = await insertEnvironmentId(trx, {
          project_id: project.id,
          name: env.name,
          slug: env.slug,
          position: env.position,
        });
        await createRootFolder(trx, created.id);
      }
      // The creator, identity or person, is the project's first admin.
      const admin = [{ role: "admin", customRoleId: null, isTemporary: false }];
      if (ctx.actor.type === "user") await ctx.deps.addProjectCreator(trx, project.id, ctx.actor.id, admin);
      else await insertMembershipWithRoles(trx, project.id, ctx.actor.id, admin);
      if (template) await applyProjectTemplate(ctx, trx, project.id, template);
      noteAudit(ctx, { projectId: project.id, projectName: project.name, metadata: { projectId: project.id, slug } });
      return project.id;
    });
    return getProjectDto(ctx, projectId);
  } catch (error) {
    if (isUniqueViolation(error, "projects_org_id_slug_key")) {
      throw new BadRequestError(`A project with the slug ${slug} already exists`);
    }
    throw error;
  }
};

export const getProjectDto = async (ctx: RequestContext, projectId: string) => {
  const { project } = await getProjectPermission(ctx, projectId);
  return toProjectDto(project, await listEnvironments(ctx.deps.db, [project.id]));
};

/** The caller's own rules in a project they belong to, packed; a project of another organization is 404. */
export const getMyProjectPermissions = async (ctx: RequestContext, projectId: string) => {
  const { project, membershipId, ability } = await getProjectPermission(ctx, projectId);
  return { permissions: packRules(ability.rules), membership: { id: membershipId, projectId: project.id } };
};

/** A member of the project reads it; anyone else gets 403, and a slug of another organization 404. */
export const getProjectDtoBySlug = async (ctx: RequestContext, slug: string) => {
  const { project } = await getProjectPermissionBySlug(ctx, slug);
  return toProjectDto(project, await listEnvironments(ctx.deps.db, [project.id]));
};

/** The projects the caller is a member of; a `type` of `all` filters nothing. */
export const listProjects = async (ctx: RequestContext, type?: string) => {
  const projects = await listProjectsOfActor(
    ctx.deps.db,
    ctx.actor.orgId,
    ctx.actor,
    type === "all" ? undefined : type,
  );
  const environments = await listEnvironments(
    ctx.deps.db,
    projects.map((p) => p.id),
  );
  return projects.map((p) =>
    toProjectDto(
      p,
      environments.filter((e) => e.project_id === p.id),
    ),
  );
};

export const deleteProject = async (ctx: RequestContext, projectId: string) => {
  const { ability, project } = await getProjectPermission(ctx, projectId);
  assertCan(ability, "delete", "workspace");
  const dto = toProjectDto(project, await listEnvironments(ctx.deps.db, [project.id]));
  noteAudit(ctx, { projectName: project.name, metadata: { name: project.name, slug: project.slug } });
  await inTransaction(ctx, (trx) => deleteProjectRow(trx, project.id));
  // Identities owned by the project went with it; their tokens must stop at once.
  ctx.deps.tokenCache.clear();
  return dto;
};
