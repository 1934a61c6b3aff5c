import { initServer } from "@ts-rest/express";
import { contract, type SecretRotationType } from "@keyward/contract";
import type { AppDeps } from "../../context";
import { contextOf } from "../../http/authenticate";
import { ok } from "../../http/respond";
import {
  createSecretRotation,
  deleteSecretRotation,
  getGeneratedCredentials,
  getSecretRotation,
  getSecretRotationByName,
  listSecretRotations,
  rotateSecretRotation,
  rotationOptions,
  updateSecretRotation,
} from "./secret-rotation.service";

const s = initServer();

/** The same eight routes for each kind of rotation. */
const typeRouter = <K extends "postgresCredentials" | "mysqlCredentials" | "redisCredentials" | "ldapPassword">(
  deps: AppDeps,
  key: K,
  type: SecretRotationType,
) =>
  s.router(contract.secretRotations[key] as (typeof contract.secretRotations)["postgresCredentials"], {
    list: async ({ query, req, res }) =>
      ok(await listSecretRotations(contextOf(deps, req, res), query.projectId, type)),
    get: async ({ params, req, res }) =>
      ok(await getSecretRotation(contextOf(deps, req, res), type, params.rotationId)),
    getByName: async ({ params, query, req, res }) =>
      ok(await getSecretRotationByName(contextOf(deps, req, res), type, params.rotationName, query)),
    create: async ({ body, req, res }) => ok(await createSecretRotation(contextOf(deps, req, res), type, body)),
    update: async ({ params, body, req, res }) =>
      ok(await updateSecretRotation(contextOf(deps, req, res), type, params.rotationId, body)),
    delete: async ({ params, query, req, res }) =>
      ok(
        await deleteSecretRotation(contextOf(deps, req, res), type, params.rotationId, {
          deleteSecrets: query.deleteSecrets === "true",
          revokeGeneratedCredentials: query.revokeGeneratedCredentials === "true",
        }),
      ),
    generatedCredentials: async ({ params, req, res }) =>
      ok(await getGeneratedCredentials(contextOf(deps, req, res), type, params.rotationId)),
    rotate: async ({ params, req, res }) =>
      ok(await rotateSecretRotation(contextOf(deps, req, res), type, params.rotationId)),
  });

export const secretRotationsRouter = (deps: AppDeps) =>
  s.router(contract.secretRotations, {
    postgresCredentials: typeRouter(deps, "postgresCredentials", "postgres-credentials"),
    mysqlCredentials: typeRouter(deps, "mysqlCredentials", "mysql-credentials") as never,
    redisCredentials: typeRouter(deps, "redisCredentials", "redis-credentials") as never,
    ldapPassword: typeRouter(deps, "ldapPassword", "ldap-password") as never,
    options: async () => ok(rotationOptions()),
    listAll: async ({ query, req, res }) => ok(await listSecretRotations(contextOf(deps, req, res), query.projectId)),
  });
