import { importX509, jwtVerify, type JWTPayload } from "jose";
import type { PublicContext } from "../../../context";
import { isUuid } from "../../../db/errors";
import { BadRequestError, ForbiddenError, NotFoundError, UnauthorizedError } from "../../../errors";
import { verifyMessage } from "../oidc/oidc-verify";
import { failingIfRemovedMeanwhile } from "../shared/login-common";
import { decodeUnverified, fetchKeyDocument, issueWorkloadToken, listOf } from "../shared/workload-login";
import { findGcpLoginConfig } from "./gcp-auth.repository";

const SERVICE_ACCOUNT = /^[a-z0-9-]+@[a-z0-9-]+\.iam\.gserviceaccount\.com$/;
const GOOGLE_ISSUERS = ["https://accounts.google.com", "accounts.google.com"];

type ComputeEngine = { project_id?: string; zone?: string; instance_id?: string; instance_name?: string };

/** A map of key id -> PEM certificate (Google's x509 format); the token's key, refetched once if unknown. */
const certificateFor = async (ctx: PublicContext, url: string, kid: string | undefined) => {
  if (!kid) throw new UnauthorizedError("Invalid signing key");
  const knows = (doc: unknown) =>
    typeof doc === "object" && doc !== null && typeof (doc as Record<string, unknown>)[kid] === "string";
  let document: unknown;
  try {
    document = await fetchKeyDocument(ctx, url, { hasKey: knows });
  } catch (error) {
    throw new UnauthorizedError(`Failed to fetch Google signing keys: ${(error as Error).message}`);
  }
  if (!knows(document)) throw new UnauthorizedError("Invalid signing key");
  return (document as Record<string, string>)[kid]!;
};

/** RS256 only; signature, expiry and audience failures answer 403 as the reference's token errors do. */
const verifyRs256 = async (jwt: string, pem: string, options: { audience: string; issuer?: string[] }) => {
  try {
    const key = await importX509(pem, "RS256");
    return (await jwtVerify(jwt, key, { algorithms: ["RS256"], ...options })).payload;
  } catch (error) {
    const e = error as { code?: string; claim?: string };
    if (e.code === "ERR_JWT_CLAIM_VALIDATION_FAILED" && e.claim === "aud")
      throw new UnauthorizedError("Invalid audience in GCP IAM Token");
    throw new ForbiddenError(verifyMessage(error, ""));
  }
};

const verifyGce = async (ctx: PublicContext, jwt: string, kid: string | undefined, identityId: string) => {
  const pem = await certificateFor(ctx, `${ctx.deps.env.GCP_KEYS_BASE_URL.replace(/\/+$/, "")}/oauth2/v1/certs`, kid);
  const payload = await verifyRs256(jwt, pem, { audience: identityId, issuer: GOOGLE_ISSUERS });
  if (typeof payload.email !== "string" || !payload.email) throw new UnauthorizedError("Unauthorized");
  const google = payload.google as { compute_engine?: ComputeEngine } | undefined;
  return { email: payload.email, computeEngine: google?.compute_engine };
};

const verifyIam = async (
  ctx: PublicContext,
  jwt: string,
  unverified: JWTPayload,
  kid: string | undefined,
  identityId: string,
) => {
  const sub = unverified.sub ?? "";
  if (!SERVICE_ACCOUNT.test(sub)) throw new UnauthorizedError("Invalid service account identifier");
  const base = ctx.deps.env.GCP_KEYS_BASE_URL.replace(/\/+$/, "");
  const pem = await certificateFor(ctx, `${base}/service_accounts/v1/metadata/x509/${encodeURIComponent(sub)}`, kid);
  await verifyRs256(jwt, pem, { audience: identityId });
  return { email: sub, computeEngine: undefined };
};

/** Log in with a Google-signed instance ID token (`gce`) or a service-account-signed JWT (`iam`). */
export const loginWithGcp = failingIfRemovedMeanwhile(
  async (ctx: PublicContext, body: { identityId: string; jwt: string }) => {
    const config = isUuid(body.identityId) ? await findGcpLoginConfig(ctx.deps.db, body.identityId) : undefined;
    if (!config) throw new NotFoundError("GCP auth method not found for identity, did you configure GCP auth?");
    const { header, payload } = decodeUnverified(body.jwt);
    const identityId = config.identity_id;
    const verified =
      config.type === "gce"
        ? await verifyGce(ctx, body.jwt, header.kid, identityId)
        : config.type === "iam"
          ? await verifyIam(ctx, body.jwt, payload, header.kid, identityId)
          : (() => {
              throw new BadRequestError("Invalid GCP Auth type");
            })();
    const accounts = listOf(config.allowed_service_accounts);
    if (accounts.length > 0 && !accounts.includes(verified.email))
      throw new UnauthorizedError("Access denied: GCP service account not allowed.");
    const gce = verified.computeEngine;
    if (config.type === "gce" && gce) {
      const projects = listOf(config.allowed_projects);
      if (projects.length > 0 && !projects.includes(gce.project_id ?? ""))
        throw new UnauthorizedError("Access denied: GCP project not allowed.");
      const zones = listOf(config.allowed_zones);
      if (zones.length > 0 && !zones.includes(gce.zone ?? ""))
        throw new UnauthorizedError("Access denied: GCP zone not allowed.");
    }
    return issueWorkloadToken(ctx, config, {
      type: config.type,
      email: verified.email,
      ...(gce ? { projectId: gce.project_id ?? "", zone: gce.zone ?? "" } : {}),
    });
  },
);
