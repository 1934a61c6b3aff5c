import { PUBLIC_KEY_JWT_ALGORITHMS } from "@keyward/contract";
import { calculateJwkThumbprint, decodeProtectedHeader, flattenedVerify, importJWK, type JWK } from "jose";
import type { AppDeps } from "../../../context";
import { illFormedStringPaths, toWellFormedText } from "../../../http/well-formed";
import type { ProfileRow } from "../profile.repository";
import type { AuditOrigin } from "../../audit/audit-protocol";
import { consumeNonce } from "./acme-nonce";
import { badNonce, badSignatureAlgorithm, malformed, unauthorized, AcmeProblem } from "./acme-problem";
import { findAccount, type AcmeAccountRow } from "./acme.repository";

/** Asymmetric signatures only: never `none`, never an HMAC with a key the client picked. */
export const ACCOUNT_KEY_ALGORITHMS: string[] = [...PUBLIC_KEY_JWT_ALGORITHMS];

export type AcmeContext = {
  deps: AppDeps;
  profile: ProfileRow;
  settings: { skipEabBinding: boolean; skipDnsOwnershipVerification: boolean };
  /** `<public URL>/api/v1/cert-manager/acme/profiles/<id>`: every URL of this profile starts with it. */
  base: string;
  /** The URL this request was sent to, as the client must have put it in the JWS. */
  url: string;
  /** The profile's organization and the request's origin, for the audit events of its changes. */
  orgId: string;
  origin: AuditOrigin;
};

export type FlattenedJws = { protected: string; payload: string; signature: string };

export type VerifiedJws = {
  header: { alg: string; nonce?: string; url?: string; jwk?: JWK; kid?: string };
  /** Undefined for POST-as-GET (empty payload). */
  payload: unknown;
  jwk: JWK;
  account?: AcmeAccountRow;
};

export const asFlattenedJws = (body: unknown): FlattenedJws => {
  const jws = body as Partial<FlattenedJws> | undefined;
  if (
    !jws ||
    typeof jws !== "object" ||
    typeof jws.protected !== "string" ||
    typeof jws.payload !== "string" ||
    typeof jws.signature !== "string"
  ) {
    throw malformed("The request body must be a flattened JWS (protected, payload, signature)");
  }
  return { protected: jws.protected, payload: jws.payload, signature: jws.signature };
};

const publicJwk = (jwk: unknown): JWK => {
  if (!jwk || typeof jwk !== "object") throw malformed("The jwk header must be a JSON Web Key");
  const key = jwk as JWK;
  if (key.d !== undefined || key.k !== undefined || key.kty === "oct") {
    throw malformed("The jwk header must hold a public key");
  }
  return key;
};

export const thumbprintOf = (jwk: JWK) => calculateJwkThumbprint(jwk, "sha256");

export const accountUrl = (ctx: AcmeContext, accountId: string) => `${ctx.base}/accounts/${accountId}`;

/** Verify a JWS with `jwk` (alg already checked); a bad signature or unusable key is malformed. */
export const verifyWithJwk = async (jws: FlattenedJws, jwk: JWK, alg: string, algorithms: string[]) => {
  try {
    const key = await importJWK(jwk, alg);
    return await flattenedVerify(jws, key, { algorithms });
  } catch {
    throw malformed("The JWS signature does not verify with the given key");
  }
};

/**
 * Every JSON part of an ACME request (protected headers and payloads, the outer JWS and the ones
 * nested in external account binding and key change) is decoded by the two functions below, so one
 * rule holds for all: JSON, and well-formed text. A lone surrogate (`\ud800` in the JSON) would
 * otherwise reach a jsonb column, which refuses it.
 */
const wellFormed = <T>(value: T, what: string): T => {
  const [path] = illFormedStringPaths(value);
  if (path) {
    const at = path.length > 0 ? ` at ${toWellFormedText(path.join("."))}` : "";
    throw malformed(`${what} is not well-formed Unicode text (it contains a lone surrogate${at})`);
  }
  return value;
};

/** A JWS payload as JSON; undefined when empty (POST-as-GET). */
export const decodeJsonPayload = (payload: Uint8Array, what = "The JWS payload"): unknown => {
  if (payload.length === 0) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(payload).toString("utf8"));
  } catch {
    throw malformed(`${what} is not JSON`);
  }
  return wellFormed(value, what);
};

/** A JWS's protected header, unverified (the signature is checked with the key it names). */
export const decodeHeader = (jws: FlattenedJws, what = "The JWS protected header") => {
  let header: ReturnType<typeof decodeProtectedHeader>;
  try {
    header = decodeProtectedHeader(jws);
  } catch {
    throw malformed(`${what} is not valid`);
  }
  return wellFormed(header, what);
};

/**
 * Check an ACME request (RFC 8555 §6.2-6.5): an allowed algorithm, the request URL in the header,
 * exactly one of jwk (new-account, revocation by certificate key) and kid (everything else), a valid
 * signature, then a fresh nonce used up.
 */
export const verifyAcmeJws = async (
  ctx: AcmeContext,
  body: unknown,
  keyKind: "jwk" | "kid" | "either",
): Promise<VerifiedJws> => {
  const jws = asFlattenedJws(body);
  const header = decodeHeader(jws) as VerifiedJws["header"];
  if (typeof header.alg !== "string" || !ACCOUNT_KEY_ALGORITHMS.includes(header.alg)) {
    throw badSignatureAlgorithm(ACCOUNT_KEY_ALGORITHMS);
  }
  if (header.url !== ctx.url) throw unauthorized("The JWS url header does not match the request URL");
  if ((header.jwk === undefined) === (header.kid === undefined)) {
    throw malformed("The JWS header must carry exactly one of jwk and kid");
  }
  let jwk: JWK;
  let account: AcmeAccountRow | undefined;
  if (header.jwk !== undefined) {
    if (keyKind === "kid") throw malformed("This request must be signed with the account key (kid)");
    jwk = publicJwk(header.jwk);
  } else {
    if (keyKind === "jwk") throw malformed("This request must carry the account key (jwk), not a kid");
    const prefix = `${ctx.base}/accounts/`;
    const accountId =
      typeof header.kid === "string" && header.kid.startsWith(prefix) ? header.kid.slice(prefix.length) : "";
    account = /^[0-9a-f-]{36}$/.test(accountId) ? await findAccount(ctx.deps.db, ctx.profile.id, accountId) : undefined;
    if (!account) throw new AcmeProblem("accountDoesNotExist", "The kid names no account of this profile");
    if (account.status !== "valid") throw unauthorized("The account is deactivated");
    jwk = account.jwk;
  }
  const verified = await verifyWithJwk(jws, jwk, header.alg, [header.alg]);
  if (typeof header.nonce !== "string" || !(await consumeNonce(ctx.deps.db, header.nonce))) throw badNonce();
  return { header, payload: decodeJsonPayload(verified.payload), jwk, account };
};

/** The account of a kid-signed request (verifyAcmeJws with "kid" always sets it). */
export const accountOf = (verified: VerifiedJws) => {
  if (!verified.account) throw malformed("This request must be signed with the account key (kid)");
  return verified.account;
};
