import { importX509, jwtVerify } from "jose";
import type { PublicContext } from "../../../context";
import { isUuid } from "../../../db/errors";
import { ForbiddenError, NotFoundError, UnauthorizedError } from "../../../errors";
import { verifyMessage } from "../oidc/oidc-verify";
import { failingIfRemovedMeanwhile } from "../shared/login-common";
import { decodeUnverified, fetchKeyDocument, issueWorkloadToken, listOf } from "../shared/workload-login";
import { findAzureLoginConfig } from "./azure-auth.repository";

type AzureKey = { kid?: string; x5c?: string[] };

const keysOf = (document: unknown): AzureKey[] =>
  typeof document === "object" && document !== null && Array.isArray((document as { keys?: unknown }).keys)
    ? (document as { keys: AzureKey[] }).keys
    : [];

const certificatePem = (der: string) =>
  `-----BEGIN CERTIFICATE-----\n${der.replace(/(.{64})/g, "$1\n")}\n-----END CERTIFICATE-----`;

/** Log in with a managed-identity access token issued by the configured tenant for the configured resource. */
export const loginWithAzure = failingIfRemovedMeanwhile(
  async (ctx: PublicContext, body: { identityId: string; jwt: string }) => {
    const config = isUuid(body.identityId) ? await findAzureLoginConfig(ctx.deps.db, body.identityId) : undefined;
    if (!config) throw new NotFoundError("Azure auth method not found for identity, did you configure Azure Auth?");
    const { header, payload } = decodeUnverified(body.jwt);
    const kid = header.kid;
    const url = `${ctx.deps.env.AZURE_KEYS_BASE_URL.replace(/\/+$/, "")}/${encodeURIComponent(config.tenant_id)}/discovery/keys`;
    let document: unknown;
    try {
      document = await fetchKeyDocument(ctx, url, { hasKey: (doc) => keysOf(doc).some((k) => k.kid === kid) });
    } catch (error) {
      throw new UnauthorizedError(`Failed to fetch Azure signing keys: ${(error as Error).message}`);
    }
    const der = keysOf(document).find((k) => kid !== undefined && k.kid === kid)?.x5c?.[0];
    if (!der) throw new UnauthorizedError("Invalid signing key");
    // A token whose audience lacks the trailing slash of the configured resource still names it.
    const audience =
      typeof payload.aud === "string" && !payload.aud.endsWith("/") && config.resource.endsWith("/")
        ? config.resource.slice(0, -1)
        : config.resource;
    let claims;
    try {
      claims = (
        await jwtVerify(body.jwt, await importX509(certificatePem(der), "RS256"), {
          algorithms: ["RS256"],
          audience,
          issuer: `https://sts.windows.net/${config.tenant_id}/`,
        })
      ).payload;
    } catch (error) {
      throw new ForbiddenError(verifyMessage(error, `https://sts.windows.net/${config.tenant_id}/`));
    }
    if (claims.tid !== config.tenant_id) throw new UnauthorizedError("Tenant ID mismatch");
    const oid = typeof claims.oid === "string" ? claims.oid : "";
    const allowed = listOf(config.allowed_service_principal_ids);
    if (allowed.length > 0 && !allowed.includes(oid))
      throw new UnauthorizedError(`Service principal '${oid}' not allowed`);
    return issueWorkloadToken(ctx, config, {
      tenantId: claims.tid,
      servicePrincipalId: oid,
      appId: typeof claims.appid === "string" ? claims.appid : "",
    });
  },
);
