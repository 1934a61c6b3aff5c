import { createHash, randomBytes } from "node:crypto";
import { createLocalJWKSet, jwtVerify, type JSONWebKeySet, type JWTPayload } from "jose";
import type { AppDeps } from "../../context";
import { hashToken } from "../../crypto/tokens";
import { inTransaction } from "../../db/transaction";
import { BadRequestError, ForbiddenError, NotFoundError, UnauthorizedError } from "../../errors";
import { withHttp } from "../connectors/http";
import { discoverProvider, kidOf, providerKeys } from "../connectors/oidc-discovery";
import { startSession, type SessionTokens } from "../sessions/session.service";
import {
  identifyProviderLogin,
  organizationOfSignIn,
  organizationToSignInTo,
  type ProviderLogin,
} from "../users/sign-in.service";
import { requestEmailProof } from "./email-link.service";
import { findOidcConfigOfOrg, type OidcConfigRow } from "./oidc-config.repository";
import { clientSecretContext, OIDC_SCHEMES } from "./oidc-config.service";
import { deleteOldLoginStates, insertLoginState, setLoginStateVerifier, spendLoginState } from "./sso-state.repository";
import { recordProtocolChange, type AuditOrigin } from "../audit/audit-protocol";

/**
 * Signing a person in with their organization's OpenID Connect provider: the authorization code
 * flow with PKCE, a one-time `state` bound to the browser that started it, and a `nonce` the ID
 * token must carry. Only hashes of state, nonce and the browser binding are stored; the PKCE
 * verifier is sealed.
 */

const STATE_TTL_MS = 10 * 60_000;
const SCOPE = "openid email profile";

type ProviderEndpoints = { issuer: string; authorizationEndpoint: string; tokenEndpoint: string; jwksUri: string };

const refused = (message: string) => new UnauthorizedError(`Single sign-on failed: ${message}`);

/** The provider's endpoints: from its discovery document, or as configured one by one. */
const endpointsOf = async (deps: AppDeps, config: OidcConfigRow): Promise<ProviderEndpoints> => {
  if (config.configuration_type === "custom") {
    return {
      issuer: config.issuer,
      authorizationEndpoint: config.authorization_endpoint,
      tokenEndpoint: config.token_endpoint,
      jwksUri: config.jwks_uri,
    };
  }
  let doc: Record<string, unknown>;
  try {
    doc = await discoverProvider(deps, config.discovery_url, { caCert: config.ca_cert ?? undefined });
  } catch (error) {
    throw refused(`the provider's discovery document could not be read (${(error as Error).message})`);
  }
  const text = (key: string) => (typeof doc?.[key] === "string" ? doc[key] : "");
  const endpoints = {
    issuer: text("issuer"),
    authorizationEndpoint: text("authorization_endpoint"),
    tokenEndpoint: text("token_endpoint"),
    jwksUri: text("jwks_uri"),
  };
  if (Object.values(endpoints).some((v) => !v)) throw refused("the provider's discovery document is incomplete");
  return endpoints;
};

const activeConfigOfOrg = async (deps: AppDeps, orgSlug: string) => {
  const org = await organizationToSignInTo(deps.db, orgSlug);
  const config = org && (await findOidcConfigOfOrg(deps.db, org.id));
  if (!org || !config || !config.is_active) {
    throw new NotFoundError(`Single sign-on is not configured for organization ${orgSlug}`);
  }
  return { org, config };
};

const random = () => randomBytes(32).toString("base64url");
const s256 = (verifier: string) => createHash("sha256").update(verifier).digest("base64url");

/**
 * Begin a sign-in: answers the provider URL to send the browser to, and the browser-binding value
 * the caller sets as a cookie (only its hash is stored).
 */
export const beginSignIn = async (
  deps: AppDeps,
  input: { orgSlug: string; callbackPort?: number; callbackState?: string; redirectUri: string },
) => {
  const { config } = await activeConfigOfOrg(deps, input.orgSlug);
  const endpoints = await endpointsOf(deps, config);
  const [state, nonce, verifier, binding] = [random(), random(), random(), random()];
  const now = deps.clock.now();
  await deleteOldLoginStates(deps.db, new Date(now - 86_400_000));
  const row = await insertLoginState(deps.db, {
    state_hash: hashToken(state),
    nonce_hash: hashToken(nonce),
    binding_hash: hashToken(binding),
    org_id: config.org_id,
    encrypted_code_verifier: "",
    callback_port: input.callbackPort ?? null,
    callback_state: input.callbackPort === undefined ? null : (input.callbackState ?? null),
    expires_at: new Date(now + STATE_TTL_MS),
  });
  await setLoginStateVerifier(deps.db, row.id, deps.secretBox.encrypt(verifier, `sso-login-state:${row.id}`));
  const url = new URL(endpoints.authorizationEndpoint);
  url.search = new URLSearchParams({
    response_type: "code",
    client_id: config.client_id,
    redirect_uri: input.redirectUri,
    scope: SCOPE,
    state,
    nonce,
    code_challenge: s256(verifier),
    code_challenge_method: "S256",
  }).toString();
  return { url: url.toString(), binding, ttlSeconds: STATE_TTL_MS / 1000 };
};

/** The code for tokens at the provider's token endpoint (client_secret_basic). */
const exchangeCode = async (
  deps: AppDeps,
  config: OidcConfigRow,
  endpoints: ProviderEndpoints,
  input: { code: string; verifier: string; redirectUri: string },
) => {
  const secret = deps.secretBox.decrypt(config.encrypted_client_secret, clientSecretContext(config.id));
  const basic = Buffer.from(`${encodeURIComponent(config.client_id)}:${encodeURIComponent(secret)}`).toString("base64");
  let status: number;
  let body: string;
  try {
    ({ status, body } = await withHttp(
      { outbound: deps.env.ALLOW_PRIVATE_OUTBOUND, secrets: [secret, input.code, input.verifier] },
      { url: endpoints.tokenEndpoint, ca: config.ca_cert || deps.outboundCa, schemes: OIDC_SCHEMES },
      (call) =>
        call({
          method: "POST",
          headers: {
            "content-type": "application/x-www-form-urlencoded",
            accept: "application/json",
            authorization: `Basic ${basic}`,
          },
          body: new URLSearchParams({
            grant_type: "authorization_code",
            code: input.code,
            redirect_uri: input.redirectUri,
            code_verifier: input.verifier,
          }).toString(),
        }),
    ));
  } catch (error) {
    throw refused(`the provider's token endpoint could not be reached (${(error as Error).message})`);
  }
  let parsed: { id_token?: unknown; error?: unknown };
  try {
    parsed = JSON.parse(body) as typeof parsed;
  } catch {
    throw refused("the provider's token answer is not JSON");
  }
  if (status !== 200 || typeof parsed.id_token !== "string") {
    throw refused(`the provider refused the code (${typeof parsed.error === "string" ? parsed.error : status})`);
  }
  return parsed.id_token;
};

const verifyIdToken = async (
  deps: AppDeps,
  config: OidcConfigRow,
  endpoints: ProviderEndpoints,
  idToken: string,
  nonceHash: Buffer,
): Promise<JWTPayload> => {
  let jwks: JSONWebKeySet;
  try {
    jwks = await providerKeys(deps, endpoints.jwksUri, { caCert: config.ca_cert ?? undefined, kid: kidOf(idToken) });
  } catch (error) {
    throw refused(`the provider's signing keys could not be read (${(error as Error).message})`);
  }
  let claims: JWTPayload;
  try {
    ({ payload: claims } = await jwtVerify(idToken, createLocalJWKSet(jwks), {
      issuer: endpoints.issuer,
      audience: config.client_id,
      algorithms: [config.jwt_signature_algorithm],
      currentDate: new Date(deps.clock.now()),
      requiredClaims: ["sub", "exp", "iat"],
    }));
  } catch (error) {
    throw refused(`the ID token is not valid (${(error as Error).message})`);
  }
  if (typeof claims.nonce !== "string" || !hashToken(claims.nonce).equals(nonceHash)) {
    throw refused("the ID token's nonce does not match this sign-in");
  }
  return claims;
};

/** The verified e-mail of the claims, inside the allowed domains. */
const emailOf = (config: OidcConfigRow, claims: JWTPayload) => {
  const email = typeof claims.email === "string" ? claims.email.trim().toLowerCase() : "";
  if (!email || !/^[^@\s]+@[^@\s]+$/.test(email)) throw refused("the provider sent no e-mail address");
  if (claims.email_verified !== true) throw refused("the provider has not verified this e-mail address");
  const allowed = config.allowed_email_domains
    .split(",")
    .map((d) => d.trim())
    .filter(Boolean);
  const domain = email.slice(email.lastIndexOf("@") + 1);
  if (allowed.length > 0 && !allowed.includes(domain)) {
    throw new ForbiddenError(`Single sign-on failed: e-mail domain ${domain} is not allowed for this organization`);
  }
  return email;
};

/** The groups claim as group names: a bounded list of strings (anything else counts as no groups). */
const groupsOf = (claims: JWTPayload): string[] => {
  const value = claims.groups;
  if (!Array.isArray(value)) return [];
  return value.filter((g): g is string => typeof g === "string" && g.length > 0 && g.length <= 256).slice(0, 256);
};

export type SignInResult =
  | (SessionTokens & { callbackPort: number | null; callbackState: string | null; email: string; orgId: string })
  | { emailProof: { binding: string; ttlSeconds: number }; orgSlug: string };

/**
 * Finish a sign-in at the callback: spend the state (once, in time, from the browser that began
 * it), exchange the code, verify the ID token, find or make the person within the organization, and
 * start their session with its audit event in one transaction. A login claiming the e-mail of a
 * person another organization knows starts no session: a code goes to the address, and
 * `confirmEmailProof` finishes the sign-in.
 */
export const completeSignIn = async (
  deps: AppDeps,
  input: { code?: string; state?: string; error?: string; binding?: string; redirectUri: string },
  origin: AuditOrigin & { userAgentText: string },
): Promise<SignInResult> => {
  if (input.error) throw refused(`the provider answered ${input.error.slice(0, 200)}`);
  if (!input.code || !input.state || input.code.length > 4096 || input.state.length > 256) {
    throw new BadRequestError("Single sign-on failed: the callback has no code or state");
  }
  const now = new Date(deps.clock.now());
  const state = await inTransaction(deps.db, (trx) => spendLoginState(trx, hashToken(input.state!), now));
  if (!state) throw new BadRequestError("Single sign-on failed: this sign-in is unknown, expired or already used");
  if (!input.binding || !hashToken(input.binding).equals(state.binding_hash)) {
    throw new BadRequestError("Single sign-on failed: this sign-in was started in another browser");
  }
  const config = await findOidcConfigOfOrg(deps.db, state.org_id);
  if (!config || !config.is_active) throw new NotFoundError("Single sign-on is not configured for this organization");
  const endpoints = await endpointsOf(deps, config);
  const verifier = deps.secretBox.decrypt(state.encrypted_code_verifier, `sso-login-state:${state.id}`);
  const idToken = await exchangeCode(deps, config, endpoints, {
    code: input.code,
    verifier,
    redirectUri: input.redirectUri,
  });
  const claims = await verifyIdToken(deps, config, endpoints, idToken, state.nonce_hash);
  const email = emailOf(config, claims);
  const login: ProviderLogin = {
    orgId: config.org_id,
    aliasType: "oidc",
    subject: String(claims.sub),
    email,
    firstName: typeof claims.given_name === "string" ? claims.given_name.slice(0, 128) : "",
    lastName: typeof claims.family_name === "string" ? claims.family_name.slice(0, 128) : "",
    now,
    groups: config.manage_group_memberships ? groupsOf(claims) : undefined,
  };
  const outcome = await inTransaction(deps.db, async (trx) => {
    const found = await identifyProviderLogin(trx, login);
    if ("proofNeeded" in found) {
      const org = await organizationOfSignIn(trx, config.org_id);
      const proof = await requestEmailProof(deps, trx, {
        login,
        userId: found.proofNeeded.userId,
        orgName: org?.name ?? "",
        callbackPort: state.callback_port,
        callbackState: state.callback_state,
        origin,
      });
      return { kind: "proof" as const, proof, orgSlug: org?.slug ?? "" };
    }
    const person = found.linked;
    const tokens = await startSession(deps, trx, {
      userId: person.userId,
      orgId: config.org_id,
      authMethod: "oidc",
      ip: origin.ipAddress,
      userAgent: origin.userAgentText,
    });
    await recordProtocolChange(trx, deps, {
      orgId: config.org_id,
      projectId: null,
      actor: { type: "user", id: person.userId, metadata: { userId: person.userId, email, authMethod: "oidc" } },
      type: "login-user-oidc",
      metadata: { userId: person.userId, email, sessionId: tokens.sessionId, ...person.note },
      origin,
    });
    return { kind: "signed-in" as const, tokens };
  });
  if (outcome.kind === "proof") {
    try {
      await outcome.proof.send();
    } catch (error) {
      deps.logger.warn({ err: error }, "could not send a sign-in code e-mail");
      throw refused("the code for this e-mail address could not be sent; try again later");
    }
    return {
      emailProof: { binding: outcome.proof.binding, ttlSeconds: outcome.proof.ttlSeconds },
      orgSlug: outcome.orgSlug,
    };
  }
  return {
    ...outcome.tokens,
    callbackPort: state.callback_port,
    callbackState: state.callback_state,
    email,
    orgId: config.org_id,
  };
};
