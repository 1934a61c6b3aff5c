import { initServer } from "@ts-rest/express";
import { contract } from "@keyward/contract";
import type { AppDeps } from "../../context";
import { contextOf } from "../../http/authenticate";
import { ok } from "../../http/respond";
import {
  createEnvironment,
  deleteEnvironment,
  listProjectEnvironments,
  updateEnvironment,
} from "./environment.service";
import {
  addIdentityMembership,
  deleteIdentityMembership,
  getIdentityMembership,
  listIdentityMemberships,
  updateIdentityMembership,
} from "./membership.service";
import {
  createProject,
  deleteProject,
  getMyProjectPermissions,
  getProjectDto,
  getProjectDtoBySlug,
  listProjects,
} from "./project.service";

const s = initServer();

export const projectsRouter = (deps: AppDeps) =>
  s.router(contract.projects, {
    createV2: async ({ body, req, res }) => ok({ project: await createProject(contextOf(deps, req, res), body) }),
    create: async ({ body, req, res }) => ok({ project: await createProject(contextOf(deps, req, res), body) }),
    list: async ({ query, req, res }) => ok({ projects: await listProjects(contextOf(deps, req, res), query.type) }),
    listWorkspaces: async ({ query, req, res }) =>
      ok({
        workspaces: (await listProjects(contextOf(deps, req, res), query.type)).map((p) => ({ ...p, _id: p.id })),
      }),
    getBySlug: async ({ params, req, res }) => ok(await getProjectDtoBySlug(contextOf(deps, req, res), params.slug)),
    getBySlugV2: async ({ params, req, res }) => ok(await getProjectDtoBySlug(contextOf(deps, req, res), params.slug)),
    get: async ({ params, req, res }) =>
      ok({ project: await getProjectDto(contextOf(deps, req, res), params.projectId) }),
    delete: async ({ params, req, res }) =>
      ok({ project: await deleteProject(contextOf(deps, req, res), params.projectId) }),
    getWorkspace: async ({ params, req, res }) =>
      ok({ workspace: await getProjectDto(contextOf(deps, req, res), params.projectId) }),
    myPermissions: async ({ params, req, res }) =>
      ok({ data: await getMyProjectPermissions(contextOf(deps, req, res), params.projectId) }),
    createEnvironment: async ({ params, body, req, res }) =>
      ok(await createEnvironment(contextOf(deps, req, res), params.projectId, body)),
    listEnvironments: async ({ params, req, res }) =>
      ok(await listProjectEnvironments(contextOf(deps, req, res), params.projectId)),
    updateEnvironment: async ({ params, body, req, res }) =>
      ok(await updateEnvironment(contextOf(deps, req, res), params.projectId, params.environmentId, body)),
    deleteEnvironment: async ({ params, req, res }) =>
      ok(await deleteEnvironment(contextOf(deps, req, res), params.projectId, params.environmentId)),
    addIdentityMembership: async ({ params, body, req, res }) =>
      ok({
        identityMembership: await addIdentityMembership(
          contextOf(deps, req, res),
          params.projectId,
          params.identityId,
          body,
        ),
      }),
    getIdentityMembership: async ({ params, req, res }) =>
      ok({
        identityMembership: await getIdentityMembership(contextOf(deps, req, res), params.projectId, params.identityId),
      }),
    listIdentityMemberships: async ({ params, query, req, res }) =>
      ok(await listIdentityMemberships(contextOf(deps, req, res), params.projectId, query)),
    updateIdentityMembership: async ({ params, body, req, res }) =>
      ok({
        roles: await updateIdentityMembership(
          contextOf(deps, req, res),
          params.projectId,
          params.identityId,
          body.roles,
        ),
      }),
    deleteIdentityMembership: async ({ params, req, res }) =>
      ok({
        identityMembership: await deleteIdentityMembership(
          contextOf(deps, req, res),
          params.projectId,
          params.identityId,
        ),
      }),
  });
