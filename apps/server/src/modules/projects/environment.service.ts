import { inTransaction, type Tx } from "../../db/transaction";
import { noteAudit, type RequestContext } from "../../context";
import type { Database } from "../../db/database";
import { isUniqueViolation, isUuid } from "../../db/errors";
import { BadRequestError, NotFoundError } from "../../errors";
import { getProjectPermission } from "../authz/project-access";
import { assertCan } from "../authz/guard";
import { toEnvironmentDto } from "./project.dto";
import {
  closeEnvironmentGap,
  countEnvironments,
  deleteEnvironmentRow,
  findEnvironment,
  insertEnvironment,
  listEnvironments,
  lockProjectRow,
  shiftEnvironmentsBetween,
  shiftEnvironmentsFrom,
  updateEnvironmentRow,
} from "./project.repository";
import { createRootFolder } from "../folders/folder.service";

const duplicateSlug = (slug: string) => new BadRequestError(`Environment with slug '${slug}' already exist`);

/**
 * One environment writer per project at a time, so concurrent writes never duplicate a position;
 * 404 when the project was deleted meanwhile.
 */
const lockProject = async (trx: Tx, projectId: string) => {
  const locked = await lockProjectRow(trx, projectId);
  if (!locked) throw new NotFoundError(`Project with ${projectId} not found`);
};

export const createEnvironment = async (
  ctx: RequestContext,
  projectId: string,
  body: { name: string; slug: string; position?: number },
) => {
  const { ability, project } = await getProjectPermission(ctx, projectId);
  assertCan(ability, "create", "environments");
  try {
    const row = await inTransaction(ctx, async (trx) => {
      await lockProject(trx, project.id);
      const { count } = await countEnvironments(trx, project.id);
      const position = Math.min(body.position ?? Number(count) + 1, Number(count) + 1);
      await shiftEnvironmentsFrom(trx, project.id, position);
      const created = await insertEnvironment(trx, {
        project_id: project.id,
        name: body.name,
        slug: body.slug,
        position,
      });
      await createRootFolder(trx, created.id);
      noteAudit(ctx, { metadata: { environmentId: created.id } });
      return created;
    });
    return { message: "Successfully created environment", environment: toEnvironmentDto(row) };
  } catch (error) {
    if (isUniqueViolation(error)) throw duplicateSlug(body.slug);
    throw error;
  }
};

export const listProjectEnvironments = async (ctx: RequestContext, projectId: string) => {
  const { ability, project } = await getProjectPermission(ctx, projectId);
  assertCan(ability, "read", "environments");
  return { environments: (await listEnvironments(ctx.deps.db, [project.id])).map(toEnvironmentDto) };
};

/** Read again under the project lock by writers: positions move with every write. */
const requireEnvironment = async (
  ctx: RequestContext,
  projectId: string,
  environmentId: string,
  db: Database = ctx.deps.db,
) => {
  const env = isUuid(environmentId) ? await findEnvironment(db, projectId, environmentId) : undefined;
  if (!env) throw new NotFoundError(`Environment with id ${environmentId} not found`);
  return env;
};

export const updateEnvironment = async (
  ctx: RequestContext,
  projectId: string,
  environmentId: string,
  body: { name?: string; slug?: string; position?: number },
) => {
  const { ability, project } = await getProjectPermission(ctx, projectId);
  assertCan(ability, "edit", "environments");
  const found = await requireEnvironment(ctx, project.id, environmentId);
  try {
    const row = await inTransaction(ctx, async (trx) => {
      await lockProject(trx, project.id);
      const env = await requireEnvironment(ctx, project.id, found.id, trx);
      if (body.position !== undefined && body.position !== env.position) {
        const { count } = await countEnvironments(trx, project.id);
        const target = Math.min(body.position, Number(count));
        const [lo, hi, step] = target > env.position ? [env.position + 1, target, -1] : [target, env.position - 1, 1];
        await shiftEnvironmentsBetween(trx, project.id, lo, hi, step);
        body = { ...body, position: target };
      }
      return updateEnvironmentRow(trx, env.id, {
        name: body.name,
        slug: body.slug,
        position: body.position,
        updated_at: new Date(),
      });
    });
    return { message: "Successfully updated environment", environment: toEnvironmentDto(row) };
  } catch (error) {
    if (isUniqueViolation(error)) throw duplicateSlug(body.slug ?? found.slug);
    throw error;
  }
};

export const deleteEnvironment = async (ctx: RequestContext, projectId: string, environmentId: string) => {
  const { ability, project } = await getProjectPermission(ctx, projectId);
  assertCan(ability, "delete", "environments");
  const found = await requireEnvironment(ctx, project.id, environmentId);
  const env = await inTransaction(ctx, async (trx) => {
    await lockProject(trx, project.id);
    const env = await requireEnvironment(ctx, project.id, found.id, trx);
    await deleteEnvironmentRow(trx, env.id);
    await closeEnvironmentGap(trx, project.id, env.position);
    return env;
  });
  return { message: "Successfully deleted environment", environment: toEnvironmentDto(env) };
};
