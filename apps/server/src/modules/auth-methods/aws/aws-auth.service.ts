import { DEFAULT_STS_ENDPOINT } from "@keyward/contract";
import type { RequestContext } from "../../../context";
import { resolveOutboundTarget } from "../../../lib/outbound";
import { toAuthConfigDto } from "../shared/auth-config";
import type { AuthConfigRow } from "../shared/auth-config.repository";
import {
  authorizeMethodConfig,
  beginAttach,
  beginUpdate,
  insertMethodConfig,
  revokeMethodConfig,
  updateMethodConfig,
  type MethodSpec,
} from "../shared/method-config";
import type { CommonAttachInput, CommonUpdateInput } from "../shared/method-inputs";
import { findAwsAuth, insertAwsAuth, updateAwsAuth, type AwsAuthRow } from "./aws-auth.repository";

const SPEC: MethodSpec = {
  method: "aws-auth",
  label: "aws auth",
  duplicateMessage: "Failed to add AWS Auth to already configured identity",
};

type AwsFields = { stsEndpoint: string; allowedPrincipalArns: string; allowedAccountIds: string };

const toDto = (config: AuthConfigRow, aws: AwsAuthRow) => ({
  ...toAuthConfigDto(config),
  type: "iam" as const,
  stsEndpoint: aws.sts_endpoint,
  allowedPrincipalArns: aws.allowed_principal_arns,
  allowedAccountIds: aws.allowed_account_ids,
});

/**
 * A custom STS endpoint (VPC endpoint, GovCloud, China) is vetted now, as every login will call it;
 * the default stands for the caller's regional endpoint and is never called as such.
 */
const checkEndpoint = (ctx: RequestContext, url: string | undefined) =>
  url === undefined || url === DEFAULT_STS_ENDPOINT
    ? undefined
    : resolveOutboundTarget(url, { schemes: ["https:"], policy: ctx.deps.env.ALLOW_PRIVATE_OUTBOUND });

export const attachAwsAuth = async (ctx: RequestContext, identityId: string, body: CommonAttachInput & AwsFields) => {
  const attach = await beginAttach(ctx, identityId, SPEC, body);
  await checkEndpoint(ctx, body.stsEndpoint);
  const { config, extension } = await insertMethodConfig(ctx, attach.identityId, SPEC, attach.values, (trx, configId) =>
    insertAwsAuth(trx, configId, {
      sts_endpoint: body.stsEndpoint,
      allowed_principal_arns: body.allowedPrincipalArns,
      allowed_account_ids: body.allowedAccountIds,
    }),
  );
  return toDto(config, extension);
};

export const getAwsAuth = async (ctx: RequestContext, identityId: string) => {
  const config = await authorizeMethodConfig(
    ctx,
    identityId,
    "read",
    SPEC,
    "The identity does not have AWS Auth attached",
  );
  return toDto(config, await findAwsAuth(ctx.deps.db, config.id));
};

export const updateAwsAuthConfig = async (
  ctx: RequestContext,
  identityId: string,
  body: CommonUpdateInput & Partial<AwsFields>,
) => {
  const { current, values } = await beginUpdate(ctx, identityId, SPEC, "Failed to update AWS Auth", body);
  await checkEndpoint(ctx, body.stsEndpoint);
  const { config, extension } = await updateMethodConfig(ctx, current, values, (trx) =>
    updateAwsAuth(trx, current.id, {
      sts_endpoint: body.stsEndpoint,
      allowed_principal_arns: body.allowedPrincipalArns,
      allowed_account_ids: body.allowedAccountIds,
    }),
  );
  return toDto(config, extension);
};

export const revokeAwsAuth = (ctx: RequestContext, identityId: string) =>
  revokeMethodConfig(ctx, identityId, SPEC, "The identity does not have aws auth", findAwsAuth, toDto);
