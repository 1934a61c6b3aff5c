import { initServer } from "@ts-rest/express";
import { contract } from "@keyward/contract";
import type { AppDeps } from "../../context";
import { contextOf } from "../../http/authenticate";
import { ok } from "../../http/respond";
import {
  getRootKey,
  getRotation,
  listEncryptionStrategies,
  startRootKeyRotation,
  updateEncryptionStrategy,
} from "./root-key.service";

const s = initServer();

export const rootKeysRouter = (deps: AppDeps) =>
  s.router(contract.rootKeys, {
    getRootKey: async ({ req, res }) => ok(await getRootKey(contextOf(deps, req, res))),
    startRotation: async ({ req, res }) => ({
      status: 202 as const,
      body: await startRootKeyRotation(contextOf(deps, req, res)),
    }),
    getRotation: async ({ params, req, res }) => ok(await getRotation(contextOf(deps, req, res), params.rotationId)),
    listEncryptionStrategies: async ({ req, res }) => ok(await listEncryptionStrategies(contextOf(deps, req, res))),
    updateEncryptionStrategy: async ({ body, req, res }) =>
      ok(await updateEncryptionStrategy(contextOf(deps, req, res), body)),
  });
