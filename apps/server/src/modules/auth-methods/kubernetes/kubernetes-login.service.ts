import type { PublicContext } from "../../../context";
import { isUuid } from "../../../db/errors";
import { BadRequestError, NotFoundError, UnauthorizedError } from "../../../errors";
import { requestPinned, resolveOutboundTarget } from "../../../lib/outbound";
import { matchesPolicy } from "../oidc/oidc-verify";
import { failingIfRemovedMeanwhile } from "../shared/login-common";
import { openSecret } from "../shared/method-config";
import { issueWorkloadToken, listOf, withScheme } from "../shared/workload-login";
import { findKubernetesLoginConfig } from "./kubernetes-auth.repository";

type LoginConfig = NonNullable<Awaited<ReturnType<typeof findKubernetesLoginConfig>>>;
type TokenReviewStatus = {
  authenticated?: boolean;
  error?: string;
  user?: { username?: string };
  audiences?: string[];
};

const REVIEW_PATH = "/apis/authentication.k8s.io/v1/tokenreviews";

/** Ask the API server who the token belongs to (TokenReview), as the stored reviewer or the caller itself. */
const reviewToken = async (ctx: PublicContext, config: LoginConfig, jwt: string): Promise<TokenReviewStatus> => {
  if (config.token_review_mode === "gateway")
    throw new BadRequestError(
      "Token review through a gateway is not available: Keyward gateways do not carry traffic yet. Use token review mode api.",
    );
  if (config.token_review_mode !== "api")
    throw new BadRequestError(`Invalid token review mode: ${config.token_review_mode}`);
  if (!config.kubernetes_host)
    throw new BadRequestError("Kubernetes host is required when token review mode is set to API");
  const reviewer = openSecret(ctx, config.id, "k8s-reviewer-jwt", config.encrypted_token_reviewer_jwt) || jwt;
  const caCert = openSecret(ctx, config.id, "k8s-ca-cert", config.encrypted_ca_cert) || undefined;
  const target = await resolveOutboundTarget(withScheme(config.kubernetes_host), {
    schemes: ["https:", "http:"],
    policy: ctx.deps.env.ALLOW_PRIVATE_OUTBOUND,
  });
  const spec = config.allowed_audience ? { token: jwt, audiences: [config.allowed_audience] } : { token: jwt };
  let answer;
  try {
    answer = await requestPinned(target, {
      method: "POST",
      path: `${target.url.pathname.replace(/\/+$/, "")}${REVIEW_PATH}`,
      headers: { "content-type": "application/json", accept: "application/json", authorization: `Bearer ${reviewer}` },
      body: JSON.stringify({ apiVersion: "authentication.k8s.io/v1", kind: "TokenReview", spec }),
      caCert: caCert ?? ctx.deps.outboundCa,
      rejectUnauthorized: config.verify_tls_certificate,
      timeoutMs: 10_000,
      maxBytes: 64 * 1024,
    });
  } catch (error) {
    throw new BadRequestError(`Failed to review token: ${(error as Error).message}`);
  }
  let review: { status?: TokenReviewStatus; message?: string } | undefined;
  try {
    review = JSON.parse(answer.body) as typeof review;
  } catch {
    review = undefined;
  }
  if (answer.status === 401 || answer.status === 403)
    throw new UnauthorizedError(
      `Failed to validate token: the API server refused the token reviewer (${review?.message ?? answer.status})`,
    );
  if (answer.status < 200 || answer.status > 299 || !review?.status)
    throw new BadRequestError(`Failed to review token${review?.message ? `: ${review.message}` : ""}`);
  return review.status;
};

const USERNAME = /^system:serviceaccount:([^:]+):([^:]+)$/;

/** Log in with a service-account token the cluster vouches for, then the namespace, name and audience rules. */
export const loginWithKubernetes = failingIfRemovedMeanwhile(
  async (ctx: PublicContext, body: { identityId: string; jwt: string }) => {
    const config = isUuid(body.identityId) ? await findKubernetesLoginConfig(ctx.deps.db, body.identityId) : undefined;
    if (!config)
      throw new NotFoundError("Kubernetes auth method not found for identity, did you configure Kubernetes auth?");
    const status = await reviewToken(ctx, config, body.jwt);
    if (status.error) throw new UnauthorizedError(status.error);
    if (status.authenticated !== true) throw new UnauthorizedError("Kubernetes token not authenticated");
    const username = status.user?.username ?? "";
    const match = USERNAME.exec(username);
    if (!match)
      throw new BadRequestError(
        `Invalid Kubernetes service account username format: "${username}". Expected format: system:serviceaccount:<namespace>:<name>`,
      );
    const [, namespace = "", name = ""] = match;
    const namespaces = listOf(config.allowed_namespaces);
    if (namespaces.length > 0 && !namespaces.some((p) => matchesPolicy(namespace, p)))
      throw new UnauthorizedError("Access denied: K8s namespace not allowed.");
    const names = listOf(config.allowed_names);
    if (names.length > 0 && !names.some((p) => matchesPolicy(name, p)))
      throw new UnauthorizedError("Access denied: K8s name not allowed.");
    if (config.allowed_audience && !(status.audiences ?? []).includes(config.allowed_audience))
      throw new UnauthorizedError("Access denied: K8s audience not allowed.");
    return issueWorkloadToken(ctx, config, { namespace, name });
  },
);
