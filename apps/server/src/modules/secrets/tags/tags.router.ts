import { initServer } from "@ts-rest/express";
import { contract } from "@keyward/contract";
import type { AppDeps } from "../../../context";
import { contextOf } from "../../../http/authenticate";
import { ok } from "../../../http/respond";
import {
  createTag,
  deleteProjectTag,
  getTagById,
  getTagBySlug,
  listProjectTags,
  updateProjectTag,
} from "./tag.service";

const s = initServer();

/** The same handlers under /api/v1/projects and /api/v1/workspace. */
const tagHandlers = (deps: AppDeps) => ({
  list: async ({ params, req, res }: Handler<{ projectId: string }>) => {
    const tags = await listProjectTags(contextOf(deps, req, res), params.projectId);
    return ok({ workspaceTags: tags, tags });
  },
  getBySlug: async ({ params, req, res }: Handler<{ projectId: string; tagSlug: string }>) => {
    const tag = await getTagBySlug(contextOf(deps, req, res), params.projectId, params.tagSlug);
    return ok({ workspaceTag: tag, tag });
  },
  get: async ({ params, req, res }: Handler<{ projectId: string; tagId: string }>) => {
    const tag = await getTagById(contextOf(deps, req, res), params.projectId, params.tagId);
    return ok({ workspaceTag: tag, tag });
  },
  create: async ({ params, body, req, res }: Handler<{ projectId: string }, { slug: string; color: string }>) =>
    ok({ tag: await createTag(contextOf(deps, req, res), params.projectId, body!) }),
  update: async ({
    params,
    body,
    req,
    res,
  }: Handler<{ projectId: string; tagId: string }, { slug?: string; color?: string }>) =>
    ok({ tag: await updateProjectTag(contextOf(deps, req, res), params.projectId, params.tagId, body!) }),
  delete: async ({ params, req, res }: Handler<{ projectId: string; tagId: string }>) =>
    ok({ tag: await deleteProjectTag(contextOf(deps, req, res), params.projectId, params.tagId) }),
});

type Handler<P, B = unknown> = {
  params: P;
  body?: B;
  req: Parameters<typeof contextOf>[1];
  res: Parameters<typeof contextOf>[2];
};

export const secretTagsRouter = (deps: AppDeps) =>
  s.router(contract.secretTags, {
    projects: s.router(contract.secretTags.projects, tagHandlers(deps)),
    workspace: s.router(contract.secretTags.workspace, tagHandlers(deps)),
  });
