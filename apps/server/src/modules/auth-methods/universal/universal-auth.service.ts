import type { RequestContext } from "../../../context";
import { inTransaction } from "../../../db/transaction";
import { NotFoundError } from "../../../errors";
import { parseTrustedIp } from "../../../lib/ip";
import { toAuthConfigDto } from "../shared/auth-config";
import { defineAuthMethod } from "../shared/define-auth-method";
import { clearLockouts } from "../shared/lockout.repository";
import { requireMethodConfig } from "../shared/method-config";
import {
  toLockoutColumns,
  toLockoutDto,
  type CommonAttachInput,
  type CommonUpdateInput,
  type LockoutInput,
} from "../shared/method-inputs";
import { toJson } from "../shared/method-repository";
import { universalAuthRows } from "./universal-auth.repository";

export const UA_NOT_ATTACHED = "The identity does not have universal auth";

type UaFields = { clientSecretTrustedIps: { ipAddress: string }[] } & LockoutInput;

const parseIps = (ips: { ipAddress: string }[]) => ips.map((ip) => parseTrustedIp(ip.ipAddress));

const notFound = (identityId: string) =>
  new NotFoundError(`Failed to find universal auth for identity with ID ${identityId}`);

export const universalAuth = defineAuthMethod<CommonAttachInput & UaFields, CommonUpdateInput & Partial<UaFields>>()({
  spec: {
    method: "universal-auth",
    label: "universal auth",
    duplicateMessage: "Failed to add universal auth to already configured identity",
  },
  rows: universalAuthRows,
  missing: { get: notFound, update: notFound, revoke: UA_NOT_ATTACHED },
  toDto: (config, ua) => ({
    ...toAuthConfigDto(config),
    clientId: ua.client_id,
    clientSecretTrustedIps: ua.client_secret_trusted_ips,
    ...toLockoutDto(ua),
  }),
  attach: {
    parse: (body) => parseIps(body.clientSecretTrustedIps),
    row: (_ctx, body, _configId, clientSecretTrustedIps) => ({
      client_secret_trusted_ips: JSON.stringify(clientSecretTrustedIps),
      lockout_enabled: body.lockoutEnabled,
      lockout_threshold: body.lockoutThreshold,
      lockout_duration_seconds: body.lockoutDurationSeconds,
      lockout_counter_reset_seconds: body.lockoutCounterResetSeconds,
    }),
  },
  update: {
    verify: (_ctx, body) => body.clientSecretTrustedIps && parseIps(body.clientSecretTrustedIps),
    row: (_ctx, body, _configId, clientSecretTrustedIps) => ({
      client_secret_trusted_ips: toJson(clientSecretTrustedIps),
      ...toLockoutColumns(body),
    }),
  },
});

/** The identity's Universal Auth config, or the given error. */
export const requireUniversalAuth = (ctx: RequestContext, identityId: string, missing: () => Error) =>
  requireMethodConfig(ctx, identityId, universalAuth.spec, missing);

export const clearUniversalAuthLockouts = async (ctx: RequestContext, identityId: string) => {
  const current = await universalAuth.authorize(ctx, identityId, "update", UA_NOT_ATTACHED);
  return { deleted: await inTransaction(ctx, (trx) => clearLockouts(trx, current.id, new Date())) };
};
