import { initServer } from "@ts-rest/express";
import { contract } from "@keyward/contract";
import type { AppDeps } from "../../context";
import { contextOf } from "../../http/authenticate";
import { ok } from "../../http/respond";
import { createKmsKey, deleteKmsKey, getKmsKey, getKmsKeyByName, listKmsKeys, updateKmsKey } from "./kms-key.service";
import { rotateKmsKey } from "./kms-version.service";
import {
  decryptData,
  encryptData,
  exportPrivateKey,
  getPublicKey,
  listSigningAlgorithms,
  signWithKey,
  verifyWithKey,
} from "./kms-crypto.service";

const s = initServer();

export const kmsRouter = (deps: AppDeps) =>
  s.router(contract.kms, {
    create: async ({ body, req, res }) => ok({ key: await createKmsKey(contextOf(deps, req, res), body) }),
    list: async ({ query, req, res }) => ok(await listKmsKeys(contextOf(deps, req, res), query)),
    getByName: async ({ params, query, req, res }) =>
      ok({ key: await getKmsKeyByName(contextOf(deps, req, res), query.projectId, params.keyName) }),
    get: async ({ params, req, res }) => ok({ key: await getKmsKey(contextOf(deps, req, res), params.keyId) }),
    update: async ({ params, body, req, res }) =>
      ok({ key: await updateKmsKey(contextOf(deps, req, res), params.keyId, body) }),
    delete: async ({ params, req, res }) => ok({ key: await deleteKmsKey(contextOf(deps, req, res), params.keyId) }),
    rotate: async ({ params, req, res }) => ok({ key: await rotateKmsKey(contextOf(deps, req, res), params.keyId) }),
    encrypt: async ({ params, body, req, res }) =>
      ok({ ciphertext: await encryptData(contextOf(deps, req, res), params.keyId, body.plaintext) }),
    decrypt: async ({ params, body, req, res }) =>
      ok({ plaintext: await decryptData(contextOf(deps, req, res), params.keyId, body.ciphertext) }),
    signingAlgorithms: async ({ params, req, res }) =>
      ok({ signingAlgorithms: await listSigningAlgorithms(contextOf(deps, req, res), params.keyId) }),
    sign: async ({ params, body, req, res }) => ok(await signWithKey(contextOf(deps, req, res), params.keyId, body)),
    verify: async ({ params, body, req, res }) =>
      ok(await verifyWithKey(contextOf(deps, req, res), params.keyId, body)),
    publicKey: async ({ params, req, res }) =>
      ok({ publicKey: await getPublicKey(contextOf(deps, req, res), params.keyId) }),
    privateKey: async ({ params, req, res }) =>
      ok({ privateKey: await exportPrivateKey(contextOf(deps, req, res), params.keyId) }),
  });
