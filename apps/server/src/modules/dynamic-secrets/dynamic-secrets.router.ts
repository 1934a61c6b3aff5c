import { initServer } from "@ts-rest/express";
import { contract } from "@keyward/contract";
import type { AppDeps } from "../../context";
import { contextOf } from "../../http/authenticate";
import { ok } from "../../http/respond";
// Registers the lease-revocation job with main.ts's job runner.
import {
  createDynamicSecret,
  deleteDynamicSecretByName,
  getDynamicSecretByName,
  listDynamicSecrets,
  updateDynamicSecretByName,
} from "./dynamic-secret.service";
import { createLease, getLease, listLeases, renewLease, revokeLease } from "./lease.service";

const s = initServer();

export const dynamicSecretsRouter = (deps: AppDeps) =>
  s.router(contract.dynamicSecrets, {
    create: async ({ body, req, res }) =>
      ok({ dynamicSecret: await createDynamicSecret(contextOf(deps, req, res), body) }),
    update: async ({ params, body, req, res }) =>
      ok({ dynamicSecret: await updateDynamicSecretByName(contextOf(deps, req, res), params.name, body) }),
    delete: async ({ params, body, req, res }) =>
      ok({ dynamicSecret: await deleteDynamicSecretByName(contextOf(deps, req, res), params.name, body) }),
    get: async ({ params, query, req, res }) =>
      ok({ dynamicSecret: await getDynamicSecretByName(contextOf(deps, req, res), params.name, query) }),
    list: async ({ query, req, res }) =>
      ok({ dynamicSecrets: await listDynamicSecrets(contextOf(deps, req, res), query) }),
    listLeases: async ({ params, query, req, res }) =>
      ok(await listLeases(contextOf(deps, req, res), params.name, query)),
  });

export const dynamicSecretLeasesRouter = (deps: AppDeps) =>
  s.router(contract.dynamicSecretLeases, {
    create: async ({ body, req, res }) => ok(await createLease(contextOf(deps, req, res), body)),
    get: async ({ params, query, req, res }) =>
      ok({ lease: await getLease(contextOf(deps, req, res), params.leaseId, query) }),
    renew: async ({ params, body, req, res }) =>
      ok({ lease: await renewLease(contextOf(deps, req, res), params.leaseId, body) }),
    delete: async ({ params, body, req, res }) =>
      ok({ lease: await revokeLease(contextOf(deps, req, res), params.leaseId, body) }),
  });
