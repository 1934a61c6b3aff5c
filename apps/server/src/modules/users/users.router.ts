import { initServer } from "@ts-rest/express";
import { contract } from "@keyward/contract";
import type { AppDeps } from "../../context";
import { contextOf } from "../../http/authenticate";
import { publicBaseOf } from "../../http/public-base";
import { ok } from "../../http/respond";
import { addProjectMembers, listProjectPeople, removeProjectMembers } from "./project-members.service";
import {
  createUserPrivilege,
  deleteUserPrivilege,
  getUserPrivilege,
  listUserPrivileges,
  updateUserPrivilege,
} from "../privileges/person-privileges.service";
import {
  getMe,
  inviteToOrganization,
  listMyOrganizations,
  listOrgPeople,
  removeOrgPerson,
  signOutEverywhere,
  updateOrgPerson,
} from "./user.service";

const s = initServer();

export const usersRouter = (deps: AppDeps) =>
  s.router(contract.users, {
    me: async ({ req, res }) => ok({ user: { ...(await getMe(contextOf(deps, req, res))), encryptionVersion: 2 } }),
    meV2: async ({ req, res }) => ok({ user: await getMe(contextOf(deps, req, res)) }),
    organizations: async ({ req, res }) => ok({ organizations: await listMyOrganizations(contextOf(deps, req, res)) }),
    revokeMySessions: async ({ req, res }) => ok(await signOutEverywhere(contextOf(deps, req, res))),
    listOrgMemberships: async ({ params, req, res }) =>
      ok({ users: await listOrgPeople(contextOf(deps, req, res), params.orgId) }),
    updateOrgMembership: async ({ params, body, req, res }) =>
      ok({ membership: await updateOrgPerson(contextOf(deps, req, res), params.orgId, params.membershipId, body) }),
    deleteOrgMembership: async ({ params, req, res }) =>
      ok({ membership: await removeOrgPerson(contextOf(deps, req, res), params.orgId, params.membershipId) }),
    inviteToOrg: async ({ body, req, res }) =>
      ok(await inviteToOrganization(contextOf(deps, req, res), body, publicBaseOf(deps.env.PUBLIC_URL, req))),
    inviteProjectMembers: async ({ params, body, req, res }) =>
      ok({ memberships: await addProjectMembers(contextOf(deps, req, res), params.projectId, body) }),
    removeProjectMembers: async ({ params, body, req, res }) =>
      ok({ memberships: await removeProjectMembers(contextOf(deps, req, res), params.projectId, body) }),
    listProjectMemberships: async ({ params, req, res }) =>
      ok({ memberships: await listProjectPeople(contextOf(deps, req, res), params.projectId) }),
  });

export const userPrivilegesRouter = (deps: AppDeps) =>
  s.router(contract.userPrivileges, {
    create: async ({ body, req, res }) => ok({ privilege: await createUserPrivilege(contextOf(deps, req, res), body) }),
    update: async ({ params, body, req, res }) =>
      ok({ privilege: await updateUserPrivilege(contextOf(deps, req, res), params.privilegeId, body) }),
    delete: async ({ params, req, res }) =>
      ok({ privilege: await deleteUserPrivilege(contextOf(deps, req, res), params.privilegeId) }),
    list: async ({ query, req, res }) =>
      ok({ privileges: await listUserPrivileges(contextOf(deps, req, res), query.projectMembershipId) }),
    get: async ({ params, req, res }) =>
      ok({ privilege: await getUserPrivilege(contextOf(deps, req, res), params.privilegeId) }),
  });
