import { initServer } from "@ts-rest/express";
import { contract } from "@keyward/contract";
import type { AppDeps } from "../../context";
import { contextOf } from "../../http/authenticate";
import { ok } from "../../http/respond";
// Registers the resolver that applies templates when a project is created from one.
import {
  createProjectTemplate,
  deleteProjectTemplate,
  getProjectTemplate,
  listProjectTemplates,
  updateProjectTemplate,
} from "./project-template.service";

const s = initServer();

export const projectTemplatesRouter = (deps: AppDeps) =>
  s.router(contract.projectTemplates, {
    create: async ({ body, req, res }) =>
      ok({ projectTemplate: await createProjectTemplate(contextOf(deps, req, res), body) }),
    list: async ({ query, req, res }) =>
      ok({ projectTemplates: await listProjectTemplates(contextOf(deps, req, res), query.type) }),
    get: async ({ params, req, res }) =>
      ok({ projectTemplate: await getProjectTemplate(contextOf(deps, req, res), params.templateId) }),
    update: async ({ params, body, req, res }) =>
      ok({ projectTemplate: await updateProjectTemplate(contextOf(deps, req, res), params.templateId, body) }),
    delete: async ({ params, req, res }) =>
      ok({ projectTemplate: await deleteProjectTemplate(contextOf(deps, req, res), params.templateId) }),
  });
