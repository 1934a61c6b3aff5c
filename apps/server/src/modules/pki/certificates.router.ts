import { initServer } from "@ts-rest/express";
import { contract } from "@keyward/contract";
import type { AppDeps } from "../../context";
import { contextOf } from "../../http/authenticate";
import { ok } from "../../http/respond";
import { issueCertificate } from "./certificate-issue.service";
import { renewCertificate } from "./certificate-renew.service";
import {
  getCertificate,
  getCertificateBundle,
  getCertificateKeyBundle,
  getCertificatePrivateKey,
  listCertificates,
  revokeCertificate,
} from "./certificate.service";

const s = initServer();

export const certificatesRouter = (deps: AppDeps) =>
  s.router(contract.certificates, {
    issue: async ({ body, req, res }) => ok(await issueCertificate(contextOf(deps, req, res), body)),
    list: async ({ query, req, res }) => ok(await listCertificates(contextOf(deps, req, res), query)),
    get: async ({ params, req, res }) =>
      ok({ certificate: await getCertificate(contextOf(deps, req, res), params.certificateId) }),
    getBundle: async ({ params, req, res }) =>
      ok(await getCertificateBundle(contextOf(deps, req, res), params.certificateId)),
    getKeyBundle: async ({ params, req, res }) =>
      ok(await getCertificateKeyBundle(contextOf(deps, req, res), params.certificateId)),
    renew: async ({ params, body, req, res }) =>
      ok(await renewCertificate(contextOf(deps, req, res), params.certificateId, body)),
    getPrivateKey: async ({ params, req, res }) =>
      ok(await getCertificatePrivateKey(contextOf(deps, req, res), params.certificateId)),
    revoke: async ({ params, body, req, res }) =>
      ok(await revokeCertificate(contextOf(deps, req, res), params.certificateId, body.revocationReason)),
  });
