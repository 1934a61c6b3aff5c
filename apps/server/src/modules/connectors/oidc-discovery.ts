import { createHash } from "node:crypto";
import { decodeProtectedHeader, type JSONWebKeySet } from "jose";
import type { AppDeps } from "../../context";
import { getJson } from "./http";

/**
 * One client for identity providers' documents, shared by person sign-in (sso) and the machine
 * logins (OIDC, JWT and the workload methods): OIDC discovery, JWKS and other key documents are
 * fetched through the outbound guard (trusting the configured CA, else the platform's outbound
 * trust) and cached per URL and trust for ten minutes in `deps.providerDocuments`. A document that
 * does not know what a token names (its `kid`) is fetched again at once (key rotation), then at most
 * every 30 s while it stays unknown, so bad tokens cannot hammer the provider.
 */

/** What the client needs from the app: its cache, clock, outbound policy and outbound trust. */
export type ProviderDocumentDeps = Pick<AppDeps, "providerDocuments" | "clock" | "env" | "outboundCa">;

const DOCUMENT_TTL_MS = 10 * 60_000;
const REFETCH_AFTER_MS = 30_000;
const MAX_DOCUMENT_BYTES = 512 * 1024;
const WELL_KNOWN = "/.well-known/openid-configuration";

/** A provider document from `url`, cached; `hasKey` tells whether a cached one answers the question at hand. */
export const fetchProviderDocument = async (
  deps: ProviderDocumentDeps,
  url: string,
  options: { caCert?: string; hasKey: (document: unknown) => boolean },
): Promise<unknown> => {
  const caCert = options.caCert || deps.outboundCa;
  const key = `${url}\n${caCert ? createHash("sha256").update(caCert).digest("hex") : ""}`;
  const now = deps.clock.now();
  const cached = deps.providerDocuments.get(key);
  const fresh = cached !== undefined && now - cached.fetchedAt < DOCUMENT_TTL_MS;
  if (fresh && options.hasKey(cached.document)) return cached.document;
  if (fresh && cached.refetchedAt !== undefined && now - cached.refetchedAt < REFETCH_AFTER_MS) return cached.document;
  const document = await getJson(
    { outbound: deps.env.ALLOW_PRIVATE_OUTBOUND },
    { url, ca: caCert },
    { maxBytes: MAX_DOCUMENT_BYTES },
  );
  deps.providerDocuments.set(key, { document, fetchedAt: now, refetchedAt: fresh ? now : undefined });
  return document;
};

/** The discovery document's URL: the issuer's, or the discovery URL itself when given whole. */
export const discoveryUrlOf = (url: string) => {
  const base = url.replace(/\/+$/, "");
  return base.endsWith(WELL_KNOWN) ? base : `${base}${WELL_KNOWN}`;
};

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** An OpenID provider's discovery document (an object; the caller checks the fields it needs). */
export const discoverProvider = async (
  deps: ProviderDocumentDeps,
  discoveryUrl: string,
  options: { caCert?: string } = {},
): Promise<Record<string, unknown>> => {
  const document = await fetchProviderDocument(deps, discoveryUrlOf(discoveryUrl), { ...options, hasKey: isObject });
  if (!isObject(document)) throw new Error("The discovery document is not a JSON object");
  return document;
};

export const isKeySet = (document: unknown): document is JSONWebKeySet =>
  isObject(document) && Array.isArray((document as { keys?: unknown }).keys);

/** The JWKS answered without a `keys` array. */
export class NotAKeySetError extends Error {}

/** A provider's signing keys from `jwksUri`, fetched again when they lack the token's `kid`. */
export const providerKeys = async (
  deps: ProviderDocumentDeps,
  jwksUri: string,
  options: { caCert?: string; kid?: string } = {},
): Promise<JSONWebKeySet> => {
  const { kid } = options;
  const document = await fetchProviderDocument(deps, jwksUri, {
    caCert: options.caCert,
    hasKey: (doc) => isKeySet(doc) && (kid === undefined || doc.keys.some((key) => key.kid === kid)),
  });
  if (!isKeySet(document)) throw new NotAKeySetError("The JWKS document has no keys array");
  return document;
};

/** A token's `kid`, when its header can be read (a malformed token is refused by its verification). */
export const kidOf = (jwt: string) => {
  try {
    return decodeProtectedHeader(jwt).kid;
  } catch {
    return undefined;
  }
};
