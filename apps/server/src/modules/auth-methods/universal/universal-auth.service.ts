import type { RequestContext } from "../../../context";
import { inTransaction } from "../../../db/transaction";
import { NotFoundError } from "../../../errors";
import { parseTrustedIp } from "../../../lib/ip";
import { authorizeAuthMethodOperation, toAuthConfigDto, toAuthConfigValues } from "../shared/auth-config";
import type { AuthConfigRow } from "../shared/auth-config.repository";
import { clearLockouts } from "../shared/lockout.repository";
import {
  assertNotAttached,
  authorizeMethodConfig,
  beginUpdate,
  insertMethodConfig,
  requireMethodConfig,
  revokeMethodConfig,
  updateMethodConfig,
  type MethodSpec,
} from "../shared/method-config";
import {
  toLockoutColumns,
  toLockoutDto,
  type CommonAttachInput,
  type CommonUpdateInput,
  type LockoutInput,
} from "../shared/method-inputs";
import {
  findUniversalAuth,
  insertUniversalAuth,
  updateUniversalAuth,
  type UniversalAuthRow,
} from "./universal-auth.repository";

export const UA_SPEC: MethodSpec = {
  method: "universal-auth",
  label: "universal auth",
  duplicateMessage: "Failed to add universal auth to already configured identity",
};
export const UA_NOT_ATTACHED = "The identity does not have universal auth";

type UaFields = { clientSecretTrustedIps: { ipAddress: string }[] } & LockoutInput;

const toDto = (config: AuthConfigRow, ua: UniversalAuthRow) => ({
  ...toAuthConfigDto(config),
  clientId: ua.client_id,
  clientSecretTrustedIps: ua.client_secret_trusted_ips,
  ...toLockoutDto(ua),
});

/** The identity's Universal Auth config, or the given error. */
export const requireUniversalAuth = (ctx: RequestContext, identityId: string, missing: () => Error) =>
  requireMethodConfig(ctx, identityId, UA_SPEC, missing);

const notFound = (identityId: string) => () =>
  new NotFoundError(`Failed to find universal auth for identity with ID ${identityId}`);

export const attachUniversalAuth = async (
  ctx: RequestContext,
  identityId: string,
  body: CommonAttachInput & UaFields,
) => {
  const identity = await authorizeAuthMethodOperation(ctx, identityId, "attach", UA_SPEC.label);
  const values = toAuthConfigValues(body);
  const clientSecretTrustedIps = body.clientSecretTrustedIps.map((ip) => parseTrustedIp(ip.ipAddress));
  await assertNotAttached(ctx, identity.id, UA_SPEC);
  const { config, extension } = await insertMethodConfig(ctx, identity.id, UA_SPEC, values, (trx, configId) =>
    insertUniversalAuth(trx, configId, {
      client_secret_trusted_ips: clientSecretTrustedIps,
      lockout_enabled: body.lockoutEnabled,
      lockout_threshold: body.lockoutThreshold,
      lockout_duration_seconds: body.lockoutDurationSeconds,
      lockout_counter_reset_seconds: body.lockoutCounterResetSeconds,
    }),
  );
  return toDto(config, extension);
};

export const getUniversalAuth = async (ctx: RequestContext, identityId: string) => {
  const config = await authorizeMethodConfig(ctx, identityId, "read", UA_SPEC, notFound(identityId));
  return toDto(config, await findUniversalAuth(ctx.deps.db, config.id));
};

export const updateUniversalAuthConfig = async (
  ctx: RequestContext,
  identityId: string,
  body: CommonUpdateInput & Partial<UaFields>,
) => {
  const { current, values } = await beginUpdate(ctx, identityId, UA_SPEC, notFound(identityId), body);
  const clientSecretTrustedIps = body.clientSecretTrustedIps?.map((ip) => parseTrustedIp(ip.ipAddress));
  const { config, extension } = await updateMethodConfig(ctx, current, values, (trx) =>
    updateUniversalAuth(trx, current.id, {
      client_secret_trusted_ips: clientSecretTrustedIps,
      ...toLockoutColumns(body),
    }),
  );
  return toDto(config, extension);
};

export const revokeUniversalAuth = (ctx: RequestContext, identityId: string) =>
  revokeMethodConfig(ctx, identityId, UA_SPEC, UA_NOT_ATTACHED, findUniversalAuth, toDto);

export const clearUniversalAuthLockouts = async (ctx: RequestContext, identityId: string) => {
  const current = await authorizeMethodConfig(ctx, identityId, "update", UA_SPEC, UA_NOT_ATTACHED);
  return { deleted: await inTransaction(ctx, (trx) => clearLockouts(trx, current.id, new Date())) };
};
