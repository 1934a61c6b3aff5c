import { initContract } from "@ts-rest/core";
import { z } from "zod";
import { MessageSchema, TimestampSchema, rateLimited } from "./common";

const c = initContract();

/** Enrolment tokens live this long (reference: one hour). */
export const GATEWAY_ENROLLMENT_TOKEN_TTL = 3600;
/** How long a heartbeat counts when the gateway does not say (the reference alerts after an hour). */
export const DEFAULT_GATEWAY_HEARTBEAT_TTL = 3600;
export const MAX_GATEWAY_HEARTBEAT_TTL = 86_400;

const ACCOUNT_ID = /^\d{12}$/;
const PRINCIPAL_ARN =
  /^arn:aws(?:-us-gov)?:(?:iam|sts)::\d{12}:(?:user\/[A-Za-z0-9_.@+*/-]+|role\/[A-Za-z0-9_.@+*/-]+|assumed-role\/[A-Za-z0-9_.@+*/-]+|\*)$/;

/** Comma-separated lists, stored normalised as "a, b". */
const commaList = (pattern: RegExp, message: string) =>
  z
    .string()
    .trim()
    .max(4096)
    .default("")
    .refine((value) => value === "" || value.split(",").every((part) => pattern.test(part.trim())), { message })
    .transform((value) =>
      value === ""
        ? ""
        : value
            .split(",")
            .map((part) => part.trim())
            .join(", "),
    );

export const AllowedAccountIdsSchema = commaList(ACCOUNT_ID, "Each account ID must be a 12-digit number.");
export const AllowedPrincipalArnsSchema = commaList(
  PRINCIPAL_ARN,
  "Each ARN must be in the format of 'arn:aws:iam::123456789012:user/UserName', 'arn:aws:iam::123456789012:role/RoleName', or 'arn:aws:iam::123456789012:*', 'arn:aws:sts::123456789012:assumed-role/RoleName'. GovCloud ARNs (arn:aws-us-gov:...) are also supported.",
);

const StsEndpointSchema = z
  .string()
  .trim()
  .min(1)
  .max(512)
  .url()
  .refine((value) => /^https?:\/\//i.test(value), { message: "STS endpoint must be an http(s) URL" })
  .default("https://sts.amazonaws.com/");

/**
 * How a gateway proves itself. `token` and `aws` are the reference's settable methods; `identity`
 * links the gateway to an organization identity whose own access tokens then authenticate it.
 */
export const GatewayAuthMethodInputSchema = z
  .discriminatedUnion("method", [
    z.object({ method: z.literal("token") }),
    z.object({
      method: z.literal("aws"),
      stsEndpoint: StsEndpointSchema,
      allowedPrincipalArns: AllowedPrincipalArnsSchema,
      allowedAccountIds: AllowedAccountIdsSchema,
    }),
    z.object({ method: z.literal("identity"), identityId: z.string().trim().uuid() }),
  ])
  .superRefine((value, ctx) => {
    if (value.method === "aws" && value.allowedPrincipalArns === "" && value.allowedAccountIds === "") {
      ctx.addIssue({
        code: z.ZodIssueCode.custom,
        message: "At least one of allowedPrincipalArns or allowedAccountIds must be set",
        path: ["allowedPrincipalArns"],
      });
    }
  });
export type GatewayAuthMethodInput = z.infer<typeof GatewayAuthMethodInputSchema>;

export const GatewayAuthMethodSchema = z.discriminatedUnion("method", [
  z.object({
    method: z.literal("aws"),
    config: z.object({
      id: z.string(),
      stsEndpoint: z.string(),
      allowedPrincipalArns: z.string(),
      allowedAccountIds: z.string(),
      createdAt: TimestampSchema,
      updatedAt: TimestampSchema,
    }),
  }),
  z.object({ method: z.literal("token"), config: z.object({}) }),
  z.object({
    method: z.literal("identity"),
    config: z.object({ identityId: z.string(), identityName: z.string().nullable() }),
  }),
]);

/** A gateway, with `isHealthy`: a heartbeat was received within its `heartbeatTTL`. */
export const GatewaySchema = z.object({
  id: z.string(),
  identityId: z.string().nullable(),
  relayId: z.string().nullable(),
  name: z.string(),
  directAddress: z.string().nullable(),
  canRevoke: z.boolean(),
  heartbeat: TimestampSchema.nullable(),
  directHeartbeat: TimestampSchema.nullable(),
  heartbeatTTL: z.number().int().nullable(),
  isHealthy: z.boolean(),
  createdAt: TimestampSchema,
  updatedAt: TimestampSchema,
  authMethod: GatewayAuthMethodSchema,
});
export type Gateway = z.infer<typeof GatewaySchema>;

const GatewayName = z.string().trim().min(1).max(64);
const EnrollmentTokenSchema = z.string().trim().min(1).max(512);
const HeartbeatBody = z.object({ heartbeatTTL: z.number().int().min(1).max(MAX_GATEWAY_HEARTBEAT_TTL).optional() });
const GatewayParams = z.object({ gatewayId: z.string().trim().uuid() });

export const gatewaysContract = c.router({
  create: {
    method: "POST",
    path: "/api/v3/gateways",
    body: z.object({ name: GatewayName, authMethod: GatewayAuthMethodInputSchema }),
    responses: { 200: GatewaySchema },
    summary: "Create a gateway with its auth method",
  },
  list: {
    method: "GET",
    path: "/api/v3/gateways",
    responses: { 200: z.array(GatewaySchema) },
    summary: "List the organization's gateways",
  },
  get: {
    method: "GET",
    path: "/api/v3/gateways/:gatewayId",
    pathParams: GatewayParams,
    responses: { 200: GatewaySchema },
    summary: "Read a gateway",
  },
  update: {
    method: "PATCH",
    path: "/api/v3/gateways/:gatewayId",
    pathParams: GatewayParams,
    body: z.object({ name: GatewayName.optional(), authMethod: GatewayAuthMethodInputSchema.optional() }),
    responses: { 200: GatewaySchema },
    summary: "Rename a gateway or change its auth method",
  },
  delete: {
    method: "DELETE",
    path: "/api/v3/gateways/:gatewayId",
    pathParams: GatewayParams,
    body: c.noBody(),
    responses: { 200: GatewaySchema },
  },
  mintEnrollmentToken: {
    method: "POST",
    path: "/api/v3/gateways/:gatewayId/token",
    pathParams: GatewayParams,
    body: c.noBody(),
    responses: { 200: z.object({ token: z.string(), expiresAt: TimestampSchema, ttl: z.number().int() }) },
    summary: "Mint a one-time enrolment token, replacing any unused one",
  },
  revoke: {
    method: "POST",
    path: "/api/v3/gateways/:gatewayId/revoke",
    pathParams: GatewayParams,
    body: c.noBody(),
    responses: { 200: z.object({ method: z.enum(["aws", "token"]), deletedTokenCount: z.number().int() }) },
    summary: "Invalidate the gateway's access tokens and unused enrolment tokens",
  },
  login: {
    method: "POST",
    path: "/api/v3/gateways/login",
    metadata: { public: true },
    body: z.discriminatedUnion("method", [
      z.object({ method: z.literal("token"), token: EnrollmentTokenSchema }),
      z.object({
        method: z.literal("aws"),
        gatewayId: z.string().trim().uuid(),
        iamHttpRequestMethod: z.string().max(16).default("POST"),
        iamRequestBody: z.string().max(16_384),
        iamRequestHeaders: z.string().max(16_384),
      }),
    ]),
    responses: rateLimited({
      200: z.object({ accessToken: z.string(), gatewayId: z.string(), tokenType: z.literal("Bearer") }),
    }),
    summary: "Exchange an enrolment token for a gateway access token",
  },
  heartbeat: {
    method: "POST",
    path: "/api/v3/gateways/heartbeat",
    // Authenticated by a gateway access token (or a linked identity's token), not by identity auth.
    metadata: { public: true },
    body: HeartbeatBody,
    responses: { 200: MessageSchema },
    summary: "Report that the calling gateway is alive",
  },
  /** The enrolment route deployed Infisical gateway CLIs still call; it shares `login`'s handler. */
  tokenAuthEnroll: {
    method: "POST",
    path: "/api/v3/gateways/token-auth/enroll",
    metadata: { public: true },
    body: z.object({ token: EnrollmentTokenSchema }),
    responses: rateLimited({ 200: z.object({ accessToken: z.string(), gatewayId: z.string() }) }),
    summary:
      "Deprecated: login with an enrolment token (the Infisical gateway CLI's route); use /api/v3/gateways/login",
  },
  /** The heartbeat route of the Infisical gateway CLI (sent without a body); it shares `heartbeat`'s handler. */
  heartbeatV2: {
    method: "POST",
    path: "/api/v2/gateways/heartbeat",
    metadata: { public: true },
    body: HeartbeatBody,
    responses: { 200: MessageSchema },
    summary: "Report that the calling gateway is alive (the Infisical gateway CLI's route)",
  },
});
