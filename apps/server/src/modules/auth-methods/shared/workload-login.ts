import { PUBLIC_KEY_JWT_ALGORITHMS } from "@keyward/contract";
import { decodeJwt, decodeProtectedHeader } from "jose";
import type { PublicContext } from "../../../context";
import { inTransaction } from "../../../db/transaction";
import { UnauthorizedError } from "../../../errors";
import type { AuthConfigForIssue } from "../../access-tokens/access-token.service";
import { fetchProviderDocument } from "../../connectors/oidc-discovery";
import { loginResponse } from "./login-common";
import { insertVerifiedClaims } from "./workload-claims.repository";

/**
 * Pieces the workload logins (Kubernetes, GCP, AWS, Azure, JWT) share: the token issued with the
 * verified claims in one transaction, signing keys fetched through the outbound guard and cached.
 */

/** Public-key algorithms only: `none` and HMAC (a public key used as a shared secret) never verify. */
export const PUBLIC_KEY_ALGORITHMS: string[] = [...PUBLIC_KEY_JWT_ALGORITHMS];

/** Issue the token through the one issuing path and record what the login verified. */
export const issueWorkloadToken = (ctx: PublicContext, config: AuthConfigForIssue, claims: Record<string, unknown>) =>
  inTransaction(ctx, async (trx) => {
    const { response, tokenId } = await loginResponse(trx, config);
    await insertVerifiedClaims(trx, tokenId, config.method, claims);
    return response;
  });

/** Header and payload of a JWT, unverified; anything undecodable is `message` (401). */
export const decodeUnverified = (jwt: string, message = "Invalid JWT") => {
  try {
    return { header: decodeProtectedHeader(jwt), payload: decodeJwt(jwt) };
  } catch {
    throw new UnauthorizedError(message);
  }
};

/** A key document (a JWKS, an x509 map) from `url`, through the connectors' cached provider-document client. */
export const fetchKeyDocument = (
  ctx: PublicContext,
  url: string,
  options: { caCert?: string; hasKey: (document: unknown) => boolean },
): Promise<unknown> => fetchProviderDocument(ctx.deps, url, options);

/** The URL with `https://` when no scheme is given (Kubernetes hosts are often bare host:port). */
export const withScheme = (host: string) => (/^[a-z][a-z0-9+.-]*:\/\//i.test(host) ? host : `https://${host}`);

/** Comma list as stored (", "-joined) into entries; empty means no restriction. */
export const listOf = (stored: string) =>
  stored
    .split(",")
    .map((entry) => entry.trim())
    .filter(Boolean);
