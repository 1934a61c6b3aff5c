import type { Tx } from "../../db/transaction";
import type { ProjectType } from "@keyward/contract";
import type { RequestContext } from "../../context";
import { NotFoundError } from "../../errors";

/** What a project template contributes to a new project. */
export type ResolvedTemplate = {
  id: string;
  environments: { name: string; slug: string; position: number }[] | null;
  apply: (ctx: RequestContext, trx: Tx, projectId: string) => Promise<void>;
};

/** How a template name is resolved: the project-templates module's resolver, wired in AppDeps. */
export type TemplateResolver = (
  ctx: RequestContext,
  name: string,
  type: ProjectType,
) => Promise<ResolvedTemplate | undefined>;

declare module "../../context" {
  interface AppDeps {
    /** Cross-module behaviour wired by the composition root rather than by imports that would form a cycle. */
    hooks: { resolveProjectTemplate: TemplateResolver };
  }
}

/** No template or the built-in `default` means the default environments. */
export const resolveProjectTemplate = async (ctx: RequestContext, name: string | undefined, type: ProjectType) => {
  if (name === undefined || name === "default") return undefined;
  const template = await ctx.deps.hooks.resolveProjectTemplate(ctx, name, type);
  if (!template) throw new NotFoundError(`Project template with name ${name} not found`);
  return template;
};

export const applyProjectTemplate = (ctx: RequestContext, trx: Tx, projectId: string, template: ResolvedTemplate) =>
  template.apply(ctx, trx, projectId);
