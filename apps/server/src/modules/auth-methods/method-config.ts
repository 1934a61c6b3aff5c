import type { RequestContext } from "../../context";
import type { Database } from "../../db/database";
import { isUniqueViolation } from "../../db/errors";
import { BadRequestError } from "../../errors";
import { type AuthConfigRow, type AuthConfigValues, deleteAuthConfig, findAuthConfig, insertAuthConfig, updateAuthConfig } from "./auth-config.repository";

/**
 * The write paths every method shares: the common row in `identity_auth_configs` and the
 * method's own row, written together so neither exists without the other.
 */
export type MethodSpec = { method: string; label: string; duplicateMessage: string };

export const findMethodConfig = (ctx: { deps: { db: Database } }, identityId: string, spec: MethodSpec) =>
  findAuthConfig(ctx.deps.db, identityId, spec.method);

/** Reject a second attach before any outbound check runs; the unique index still settles races. */
export const assertNotAttached = async (ctx: RequestContext, identityId: string, spec: MethodSpec) => {
  if (await findMethodConfig(ctx, identityId, spec)) throw new BadRequestError(spec.duplicateMessage);
};

export const insertMethodConfig = async <E>(
  ctx: RequestContext,
  identityId: string,
  spec: MethodSpec,
  values: AuthConfigValues,
  insertExtension: (trx: Database, configId: string) => Promise<E>,
) => {
  try {
    return await ctx.deps.db.transaction().execute(async (trx) => {
      const config = await insertAuthConfig(trx, identityId, spec.method, values);
      return { config, extension: await insertExtension(trx, config.id) };
    });
  } catch (error) {
    if (isUniqueViolation(error)) throw new BadRequestError(spec.duplicateMessage);
    throw error;
  }
};

/** Config changes (trusted IPs above all) apply to issued tokens at once, so the token cache goes. */
export const updateMethodConfig = async <E>(
  ctx: RequestContext,
  current: AuthConfigRow,
  values: AuthConfigValues,
  updateExtension: (trx: Database) => Promise<E>,
) => {
  const result = await ctx.deps.db.transaction().execute(async (trx) => ({
    config: await updateAuthConfig(trx, current.id, values),
    extension: await updateExtension(trx),
  }));
  ctx.deps.tokenCache.clear();
  return result;
};

/** The method's row, its lockouts and every token it issued go with the common row (cascade). */
export const deleteMethodConfig = async (ctx: RequestContext, configId: string) => {
  await deleteAuthConfig(ctx.deps.db, configId);
  ctx.deps.tokenCache.clear();
};

/** Secrets at rest are bound to their config row and field, so a ciphertext moved elsewhere fails. */
export const sealSecret = (ctx: { deps: { secretBox: RequestContext["deps"]["secretBox"] } }, configId: string, field: string, value: string) =>
  ctx.deps.secretBox.encrypt(value, `${field}:${configId}`);

export const openSecret = (ctx: { deps: { secretBox: RequestContext["deps"]["secretBox"] } }, configId: string, field: string, value: string | null) =>
  value === null ? undefined : ctx.deps.secretBox.decrypt(value, `${field}:${configId}`);
