import { initContract } from "@ts-rest/core";
import { z } from "zod";
import { rateLimited } from "./common";
import {
  AuthConfigCommonSchema,
  TTL_ABOVE_MAX_MESSAGE,
  authConfigAttachFields,
  authConfigUpdateFields,
  ttlWithinMax,
} from "./auth-common.schema";
import {
  LoginResponseSchema,
  PemSchema,
  WorkloadLoginBodySchema,
  identityAuthMethodRoutes,
} from "./auth-methods.schema";

const c = initContract();

export const KubernetesAuthSchema = AuthConfigCommonSchema.extend({
  kubernetesHost: z.string().nullable(),
  tokenReviewMode: z.enum(["api", "gateway"]),
  allowedNamespaces: z.string(),
  allowedNames: z.string(),
  allowedAudience: z.string(),
  gatewayId: z.string().nullable(),
  gatewayPoolId: z.string().nullable(),
  templateId: z.string().nullable(),
  verifyTlsCertificate: z.boolean(),
  isTokenReviewerJwtTemplateSourced: z.boolean(),
});

/** Attach, update and get also return the decrypted CA certificate and reviewer JWT; delete does not. */
export const KubernetesAuthWithSecretsSchema = KubernetesAuthSchema.extend({
  caCert: z.string(),
  tokenReviewerJwt: z.string().nullable().optional(),
});

const HOST_MESSAGE =
  "Kubernetes host must only contain alphabets, numbers, colons, periods, hyphen, and forward slashes.";
const Host = z
  .string()
  .trim()
  .min(1)
  .max(2_048)
  .refine((v) => /^[A-Za-z0-9:./-]+$/.test(v), HOST_MESSAGE);
const ReviewMode = z.enum(["api", "gateway"]);
const Jwt = z.string().trim().max(16_384);
const List = z.string().trim().max(4_096);

const reviewModeRules = (
  data: {
    tokenReviewMode?: string;
    kubernetesHost?: string | null;
    gatewayId?: string | null;
    gatewayPoolId?: string | null;
  },
  ctx: z.RefinementCtx,
  requireHost: boolean,
) => {
  if (requireHost && data.tokenReviewMode === "api" && !data.kubernetesHost) {
    ctx.addIssue({
      path: ["kubernetesHost"],
      code: z.ZodIssueCode.custom,
      message: "When token review mode is set to API, a Kubernetes host must be provided",
    });
  }
  if (data.tokenReviewMode === "gateway" && !data.gatewayId && !data.gatewayPoolId) {
    ctx.addIssue({
      path: ["gatewayId"],
      code: z.ZodIssueCode.custom,
      message: "When token review mode is set to Gateway, a gateway must be selected",
    });
  }
};

const Wrapped = z.object({ identityKubernetesAuth: KubernetesAuthWithSecretsSchema });

export const kubernetesAuthContract = c.router({
  login: {
    method: "POST",
    path: "/api/v1/auth/kubernetes-auth/login",
    metadata: { public: true },
    body: WorkloadLoginBodySchema,
    responses: rateLimited({ 200: LoginResponseSchema }),
    summary: "Log in with a Kubernetes service-account token (TokenReview)",
  },
  ...identityAuthMethodRoutes({
    slug: "kubernetes-auth",
    name: "Kubernetes Auth",
    attachBody: z
      .object({
        kubernetesHost: Host.nullable(),
        caCert: PemSchema.default(""),
        tokenReviewerJwt: Jwt.optional(),
        tokenReviewMode: ReviewMode.default("api"),
        allowedNamespaces: List,
        allowedNames: List,
        allowedAudience: List,
        gatewayId: z.string().uuid().nullable().optional(),
        gatewayPoolId: z.string().uuid().nullable().optional(),
        verifyTlsCertificate: z.boolean().optional(),
        ...authConfigAttachFields,
      })
      .superRefine((data, ctx) => {
        reviewModeRules(data, ctx, true);
        if (!ttlWithinMax(data))
          ctx.addIssue({ path: ["accessTokenTTL"], code: z.ZodIssueCode.custom, message: TTL_ABOVE_MAX_MESSAGE });
      }),
    updateBody: z
      .object({
        kubernetesHost: Host.nullable().optional(),
        caCert: PemSchema.optional(),
        tokenReviewerJwt: Jwt.nullable().optional(),
        tokenReviewMode: ReviewMode.optional(),
        allowedNamespaces: List.optional(),
        allowedNames: List.optional(),
        allowedAudience: List.optional(),
        gatewayId: z.string().uuid().nullable().optional(),
        gatewayPoolId: z.string().uuid().nullable().optional(),
        verifyTlsCertificate: z.boolean().optional(),
        ...authConfigUpdateFields,
      })
      .superRefine((data, ctx) => {
        reviewModeRules(data, ctx, false);
        if (!ttlWithinMax(data))
          ctx.addIssue({ path: ["accessTokenTTL"], code: z.ZodIssueCode.custom, message: TTL_ABOVE_MAX_MESSAGE });
      }),
    response: Wrapped,
    revokeResponse: z.object({ identityKubernetesAuth: KubernetesAuthSchema }),
  }),
});
