import { afterCommit, inTransaction } from "../../../db/transaction";
import type { RequestContext } from "../../../context";
import type { Database } from "../../../db/database";
import { isUniqueViolation } from "../../../db/errors";
import { BadRequestError } from "../../../errors";
import { type AuthMethodOperation, authorizeAuthMethodOperation, mergeAuthConfigValues } from "./auth-config";
import {
  type AuthConfigRow,
  type AuthConfigValues,
  deleteAuthConfig,
  findAuthConfig,
  insertAuthConfig,
  updateAuthConfig,
} from "./auth-config.repository";
import type { CommonUpdateInput } from "./method-inputs";

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
    return await inTransaction(ctx, async (trx) => {
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
  return inTransaction(ctx, async (trx) => {
    afterCommit(trx, () => ctx.deps.tokenCache.clear());
    return { config: await updateAuthConfig(trx, current.id, values), extension: await updateExtension(trx) };
  });
};

/** The method's row, its lockouts and every token it issued go with the common row (cascade). */
export const deleteMethodConfig = async (ctx: RequestContext, configId: string) => {
  await inTransaction(ctx, (trx) => deleteAuthConfig(trx, configId));
  ctx.deps.tokenCache.clear();
};

/** What to throw when the method is not attached: a message means 400, as most routes answer. */
export type NotAttached = string | (() => Error);

export const requireMethodConfig = async (
  ctx: RequestContext,
  identityId: string,
  spec: MethodSpec,
  missing: NotAttached,
) => {
  const config = await findMethodConfig(ctx, identityId, spec);
  if (!config) throw typeof missing === "string" ? new BadRequestError(missing) : missing();
  return config;
};

/**
 * The opening of get, update, revoke and clear-lockouts: permission first, then the method's own
 * input checks (`check`), then the attached config, so errors keep the reference's order.
 */
export const authorizeMethodConfig = async (
  ctx: RequestContext,
  identityId: string,
  operation: AuthMethodOperation,
  spec: MethodSpec,
  missing: NotAttached,
  check?: () => void,
) => {
  const identity = await authorizeAuthMethodOperation(ctx, identityId, operation, spec.label);
  check?.();
  return requireMethodConfig(ctx, identity.id, spec, missing);
};

/** The opening of update: the stored config and the common values merged over it. */
export const beginUpdate = async (
  ctx: RequestContext,
  identityId: string,
  spec: MethodSpec,
  missing: NotAttached,
  body: CommonUpdateInput,
  check?: () => void,
) => {
  const current = await authorizeMethodConfig(ctx, identityId, "update", spec, missing, check);
  return { current, values: mergeAuthConfigValues(current, body) };
};

/** Revoke answers with the config as it was, so the method's row is read before the cascade. */
export const revokeMethodConfig = async <E, D>(
  ctx: RequestContext,
  identityId: string,
  spec: MethodSpec,
  missing: NotAttached,
  findExtension: (db: Database, configId: string) => Promise<E>,
  toDto: (config: AuthConfigRow, extension: E) => D,
) => {
  const current = await authorizeMethodConfig(ctx, identityId, "revoke", spec, missing);
  const extension = await findExtension(ctx.deps.db, current.id);
  await deleteMethodConfig(ctx, current.id);
  return toDto(current, extension);
};

/** Secrets at rest are bound to their config row and field, so a ciphertext moved elsewhere fails. */
export const sealSecret = (
  ctx: { deps: { secretBox: RequestContext["deps"]["secretBox"] } },
  configId: string,
  field: string,
  value: string,
) => ctx.deps.secretBox.encrypt(value, `${field}:${configId}`);

export const openSecret = (
  ctx: { deps: { secretBox: RequestContext["deps"]["secretBox"] } },
  configId: string,
  field: string,
  value: string | null,
) => (value === null ? undefined : ctx.deps.secretBox.decrypt(value, `${field}:${configId}`));

/** A sealed column on write: an absent value leaves it as it is, an empty one clears it. */
export const sealOrClear = <V extends string | undefined>(
  ctx: { deps: { secretBox: RequestContext["deps"]["secretBox"] } },
  configId: string,
  field: string,
  value: V,
) =>
  (value === undefined ? undefined : value ? sealSecret(ctx, configId, field, value) : null) as
    string | null | (undefined extends V ? undefined : never);
