import { initServer } from "@ts-rest/express";
import { contract } from "@keyward/contract";
import type { AppDeps } from "../../context";
import { contextOf } from "../../http/authenticate";
import { ok } from "../../http/respond";
import { listCaCertificates, renewCa } from "./ca-renew.service";
import { createCa, deleteCa, getCa, getCaCertificate, getCaCrl, listCas, updateCaStatusOrName } from "./ca.service";

const s = initServer();

export const certificateAuthoritiesRouter = (deps: AppDeps) =>
  s.router(contract.certificateAuthorities, {
    create: async ({ body, req, res }) => ok({ certificateAuthority: await createCa(contextOf(deps, req, res), body) }),
    list: async ({ query, req, res }) => ok(await listCas(contextOf(deps, req, res), query)),
    get: async ({ params, req, res }) =>
      ok({ certificateAuthority: await getCa(contextOf(deps, req, res), params.caId) }),
    update: async ({ params, body, req, res }) =>
      ok({ certificateAuthority: await updateCaStatusOrName(contextOf(deps, req, res), params.caId, body) }),
    delete: async ({ params, req, res }) =>
      ok({ certificateAuthority: await deleteCa(contextOf(deps, req, res), params.caId) }),
    getCertificate: async ({ params, req, res }) => ok(await getCaCertificate(contextOf(deps, req, res), params.caId)),
    getCrl: async ({ params, req, res }) => ok(await getCaCrl(contextOf(deps, req, res), params.caId)),
    renew: async ({ params, body, req, res }) => ok(await renewCa(contextOf(deps, req, res), params.caId, body)),
    listCaCertificates: async ({ params, req, res }) =>
      ok(await listCaCertificates(contextOf(deps, req, res), params.caId)),
  });
