import { initServer } from "@ts-rest/express";
import { contract } from "@keyward/contract";
import type { AppDeps } from "../../context";
import { contextOf } from "../../http/authenticate";
import { ok } from "../../http/respond";
import { getProfileBySlug, revealEabSecret, rotateEabSecret } from "./profile-eab.service";
import { issueScepChallenge } from "./scep/scep-challenge.service";
import { createProfile, deleteProfile, getProfile, listProfiles, updateProfile } from "./profile.service";

const s = initServer();

export const certificateProfilesRouter = (deps: AppDeps) =>
  s.router(contract.certificateProfiles, {
    create: async ({ body, req, res }) =>
      ok({ certificateProfile: await createProfile(contextOf(deps, req, res), body) }),
    list: async ({ query, req, res }) => ok(await listProfiles(contextOf(deps, req, res), query)),
    getBySlug: async ({ params, query, req, res }) =>
      ok({ certificateProfile: await getProfileBySlug(contextOf(deps, req, res), query.projectId, params.slug) }),
    revealAcmeEabSecret: async ({ params, req, res }) =>
      ok(await revealEabSecret(contextOf(deps, req, res), params.profileId)),
    rotateAcmeEabSecret: async ({ params, req, res }) =>
      ok(await rotateEabSecret(contextOf(deps, req, res), params.profileId)),
    issueScepChallenge: async ({ params, req, res }) =>
      ok(await issueScepChallenge(contextOf(deps, req, res), params.profileId)),
    get: async ({ params, req, res }) =>
      ok({ certificateProfile: await getProfile(contextOf(deps, req, res), params.profileId) }),
    update: async ({ params, body, req, res }) =>
      ok({ certificateProfile: await updateProfile(contextOf(deps, req, res), params.profileId, body) }),
    delete: async ({ params, req, res }) =>
      ok({ certificateProfile: await deleteProfile(contextOf(deps, req, res), params.profileId) }),
  });
