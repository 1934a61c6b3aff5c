import { initContract } from "@ts-rest/core";
import { z } from "zod";
import { rateLimited } from "./common";
import {
  AuthConfigCommonSchema,
  TtlSchema,
  authConfigAttachFields,
  authConfigUpdateFields,
} from "./auth-common.schema";
import { LoginResponseSchema, authMethodBody, identityAuthMethodRoutes } from "./auth-methods.schema";

const c = initContract();

export const DEFAULT_STS_ENDPOINT = "https://sts.amazonaws.com/";

export const AwsAuthSchema = AuthConfigCommonSchema.extend({
  type: z.literal("iam"),
  stsEndpoint: z.string(),
  allowedPrincipalArns: z.string(),
  allowedAccountIds: z.string(),
});

const ARN =
  /^arn:aws(-us-gov|-cn)?:(iam|sts)::\d{12}:(user\/[\w+=,.@*/-]+|role\/[\w+=,.@*/-]+|assumed-role\/[\w+=,.@*/-]+|\*)$/;
const ARN_MESSAGE =
  "Each ARN must be arn:aws:iam::<12-digit account>:user/<name>, :role/<name>, :* or arn:aws:sts::<account>:assumed-role/<role>/<session> (GovCloud arn:aws-us-gov and China arn:aws-cn allowed); names may use letters, digits and _.@+*/- and * as a wildcard.";

/** "a, b ,c" -> "a, b, c" after every entry passes `valid`. */
const checkedList = (valid: (entry: string) => boolean, message: string) =>
  z
    .string()
    .trim()
    .max(4_096)
    .transform((v) => (v === "" ? [] : v.split(",").map((e) => e.trim())))
    .superRefine((entries, ctx) => {
      if (entries.some((e) => !valid(e))) ctx.addIssue({ code: z.ZodIssueCode.custom, message });
    })
    .transform((entries) => entries.join(", "));

const PrincipalArns = checkedList((e) => e.length <= 512 && ARN.test(e), ARN_MESSAGE);
const AccountIds = checkedList((e) => /^\d{12}$/.test(e), "Each account ID must be a 12-digit number.");
const StsEndpoint = z.string().trim().min(1).max(2_048).url();

export const awsAuthContract = c.router({
  login: {
    method: "POST",
    path: "/api/v1/auth/aws-auth/login",
    metadata: { public: true },
    body: z.object({
      identityId: z.string().trim().max(64),
      iamHttpRequestMethod: z.enum(["POST", "GET"]).default("POST"),
      iamRequestBody: z.string().max(16_384),
      iamRequestHeaders: z.string().max(16_384),
      organizationSlug: z.string().trim().max(64).optional(),
    }),
    responses: rateLimited({ 200: LoginResponseSchema }),
    summary: "Log in with a signed sts:GetCallerIdentity request",
  },
  ...identityAuthMethodRoutes({
    slug: "aws-auth",
    name: "AWS Auth",
    attachBody: authMethodBody({
      stsEndpoint: StsEndpoint.default(DEFAULT_STS_ENDPOINT),
      allowedPrincipalArns: PrincipalArns.default(""),
      allowedAccountIds: AccountIds.default(""),
      ...authConfigAttachFields,
      accessTokenMaxTTL: TtlSchema.min(1).default(2_592_000),
    }),
    updateBody: authMethodBody({
      stsEndpoint: StsEndpoint.optional(),
      allowedPrincipalArns: PrincipalArns.optional(),
      allowedAccountIds: AccountIds.optional(),
      ...authConfigUpdateFields,
    }),
    response: z.object({ identityAwsAuth: AwsAuthSchema }),
  }),
});
