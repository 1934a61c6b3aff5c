import { DEFAULT_STS_ENDPOINT } from "@keyward/contract";
import type { RequestContext } from "../../../context";
import { resolveOutboundTarget } from "../../../lib/outbound";
import { toAuthConfigDto } from "../shared/auth-config";
import { defineAuthMethod } from "../shared/define-auth-method";
import type { CommonAttachInput, CommonUpdateInput } from "../shared/method-inputs";
import { awsAuthRows } from "./aws-auth.repository";

type AwsFields = { stsEndpoint: string; allowedPrincipalArns: string; allowedAccountIds: string };

/**
 * A custom STS endpoint (VPC endpoint, GovCloud, China) is vetted now, as every login will call it;
 * the default stands for the caller's regional endpoint and is never called as such.
 */
const checkEndpoint = async (ctx: RequestContext, body: Partial<AwsFields>) => {
  const url = body.stsEndpoint;
  if (url === undefined || url === DEFAULT_STS_ENDPOINT) return;
  await resolveOutboundTarget(url, { schemes: ["https:"], policy: ctx.deps.env.ALLOW_PRIVATE_OUTBOUND });
};

const toColumns = <B extends Partial<AwsFields>>(body: B) => ({
  sts_endpoint: body.stsEndpoint as B["stsEndpoint"],
  allowed_principal_arns: body.allowedPrincipalArns as B["allowedPrincipalArns"],
  allowed_account_ids: body.allowedAccountIds as B["allowedAccountIds"],
});

export const awsAuth = defineAuthMethod<CommonAttachInput & AwsFields, CommonUpdateInput & Partial<AwsFields>>()({
  spec: {
    method: "aws-auth",
    label: "aws auth",
    duplicateMessage: "Failed to add AWS Auth to already configured identity",
  },
  rows: awsAuthRows,
  missing: {
    get: "The identity does not have AWS Auth attached",
    update: "Failed to update AWS Auth",
    revoke: "The identity does not have aws auth",
  },
  toDto: (config, aws) => ({
    ...toAuthConfigDto(config),
    type: "iam" as const,
    stsEndpoint: aws.sts_endpoint,
    allowedPrincipalArns: aws.allowed_principal_arns,
    allowedAccountIds: aws.allowed_account_ids,
  }),
  attach: {
    row: (_ctx, body) => toColumns(body),
    verify: checkEndpoint,
  },
  update: {
    row: (_ctx, body) => toColumns(body),
    verify: checkEndpoint,
  },
});
