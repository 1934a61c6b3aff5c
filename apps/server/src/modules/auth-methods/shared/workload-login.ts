import { PUBLIC_KEY_JWT_ALGORITHMS } from "@keyward/contract";
import { createHash } from "node:crypto";
import { decodeJwt, decodeProtectedHeader } from "jose";
import type { PublicContext } from "../../../context";
import { inTransaction } from "../../../db/transaction";
import { UnauthorizedError } from "../../../errors";
import { getJsonPinned, resolveOutboundTarget } from "../../../lib/outbound";
import type { AuthConfigForIssue } from "../../access-tokens/access-token.service";
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

const KEYS_TTL_MS = 10 * 60_000;
/** An unknown `kid` refetches, but not more often than this per URL, so bad tokens cannot hammer the source. */
const REFETCH_AFTER_MS = 30_000;

/**
 * A key document (a JWKS, an x509 map) from `url`, through the outbound guard, cached per URL and
 * trust for ten minutes. `hasKey` tells whether the cached document knows the token's key; if not,
 * it is fetched again at once (key rotation), then at most every 30 s while keys stay unknown.
 */
export const fetchKeyDocument = async (
  ctx: PublicContext,
  url: string,
  options: { caCert?: string; hasKey: (document: unknown) => boolean },
): Promise<unknown> => {
  const caCert = options.caCert || ctx.deps.outboundCa;
  const key = `${url}\n${caCert ? createHash("sha256").update(caCert).digest("hex") : ""}`;
  const now = ctx.deps.clock.now();
  const cached = ctx.deps.keySets.get(key);
  const fresh = cached !== undefined && now - cached.fetchedAt < KEYS_TTL_MS;
  if (fresh && options.hasKey(cached.document)) return cached.document;
  if (fresh && cached.refetchedAt !== undefined && now - cached.refetchedAt < REFETCH_AFTER_MS) return cached.document;
  const target = await resolveOutboundTarget(url, {
    schemes: ["https:", "http:"],
    policy: ctx.deps.env.ALLOW_PRIVATE_OUTBOUND,
  });
  const document = await getJsonPinned(target, { caCert, timeoutMs: 10_000, maxBytes: 512 * 1024 });
  ctx.deps.keySets.set(key, { document, fetchedAt: now, refetchedAt: fresh ? now : undefined });
  return document;
};

/** The URL with `https://` when no scheme is given (Kubernetes hosts are often bare host:port). */
export const withScheme = (host: string) => (/^[a-z][a-z0-9+.-]*:\/\//i.test(host) ? host : `https://${host}`);

/** Comma list as stored (", "-joined) into entries; empty means no restriction. */
export const listOf = (stored: string) =>
  stored
    .split(",")
    .map((entry) => entry.trim())
    .filter(Boolean);
