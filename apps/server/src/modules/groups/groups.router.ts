import { initServer } from "@ts-rest/express";
import { contract } from "@keyward/contract";
import type { AppDeps } from "../../context";
import { contextOf } from "../../http/authenticate";
import { ok } from "../../http/respond";
import {
  addIdentityToGroup,
  addUserToGroup,
  listGroupIdentityMembers,
  listGroupUserMembers,
  removeIdentityFromGroup,
  removeUserFromGroup,
} from "./group-members.service";
import { createGroup, deleteGroup, getGroup, listOrgGroups, updateGroup } from "./group.service";
import {
  addGroupToProject,
  getProjectGroup,
  listProjectGroups,
  removeGroupFromProject,
  updateProjectGroup,
} from "./project-group.service";

const s = initServer();

/** Organization groups: responses are the bare objects, as in the reference. */
export const groupsRouter = (deps: AppDeps) =>
  s.router(contract.groups, {
    create: async ({ body, req, res }) => ok(await createGroup(contextOf(deps, req, res), body)),
    list: async ({ req, res }) => ok(await listOrgGroups(contextOf(deps, req, res))),
    get: async ({ params, req, res }) => ok(await getGroup(contextOf(deps, req, res), params.id)),
    update: async ({ params, body, req, res }) => ok(await updateGroup(contextOf(deps, req, res), params.id, body)),
    delete: async ({ params, req, res }) => ok(await deleteGroup(contextOf(deps, req, res), params.id)),
    listUsers: async ({ params, query, req, res }) =>
      ok(await listGroupUserMembers(contextOf(deps, req, res), params.id, query)),
    addUser: async ({ params, req, res }) =>
      ok(await addUserToGroup(contextOf(deps, req, res), params.id, params.username)),
    removeUser: async ({ params, req, res }) =>
      ok(await removeUserFromGroup(contextOf(deps, req, res), params.id, params.username)),
    listIdentities: async ({ params, query, req, res }) =>
      ok(await listGroupIdentityMembers(contextOf(deps, req, res), params.id, query)),
    addIdentity: async ({ params, req, res }) =>
      ok(await addIdentityToGroup(contextOf(deps, req, res), params.id, params.machineIdentityId)),
    removeIdentity: async ({ params, req, res }) =>
      ok(await removeIdentityFromGroup(contextOf(deps, req, res), params.id, params.machineIdentityId)),
  });

export const projectGroupsRouter = (deps: AppDeps) =>
  s.router(contract.projectGroups, {
    add: async ({ params, body, req, res }) =>
      ok({
        groupMembership: await addGroupToProject(
          contextOf(deps, req, res),
          params.projectId,
          params.groupIdOrName,
          body,
        ),
      }),
    list: async ({ params, req, res }) =>
      ok({ groupMemberships: await listProjectGroups(contextOf(deps, req, res), params.projectId) }),
    get: async ({ params, req, res }) =>
      ok({ groupMembership: await getProjectGroup(contextOf(deps, req, res), params.projectId, params.groupId) }),
    update: async ({ params, body, req, res }) =>
      ok({ roles: await updateProjectGroup(contextOf(deps, req, res), params.projectId, params.groupId, body.roles) }),
    remove: async ({ params, req, res }) =>
      ok({
        groupMembership: await removeGroupFromProject(contextOf(deps, req, res), params.projectId, params.groupId),
      }),
  });
