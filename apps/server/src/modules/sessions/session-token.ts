import { SignJWT, jwtVerify } from "jose";

/**
 * A person's access token: an HS256 JWT under a key derived from the root key, naming the session
 * (`tokenVersionId`), the person and the organization. Command-line tools read `exp` from it; the
 * server also checks the session on every request, so signing out ends the token at once.
 */
export type AccessClaims = {
  authTokenType: "accessToken";
  userId: string;
  tokenVersionId: string;
  organizationId: string;
  authMethod: string;
};

export const SESSION_KEY_PURPOSE = "user-session-access-token";
const ISSUER = "keyward";

export const signAccessToken = (key: Buffer, claims: AccessClaims, nowMs: number, ttlSeconds: number) =>
  new SignJWT(claims)
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setIssuer(ISSUER)
    .setIssuedAt(Math.floor(nowMs / 1000))
    .setExpirationTime(Math.floor(nowMs / 1000) + ttlSeconds)
    .sign(key);

/** The claims of a valid, unexpired token of this server; undefined for anything else. */
export const verifyAccessToken = async (key: Buffer, token: string, nowMs: number) => {
  try {
    const { payload } = await jwtVerify(token, key, {
      issuer: ISSUER,
      algorithms: ["HS256"],
      currentDate: new Date(nowMs),
    });
    if (
      payload.authTokenType !== "accessToken" ||
      typeof payload.tokenVersionId !== "string" ||
      typeof payload.userId !== "string" ||
      typeof payload.organizationId !== "string"
    ) {
      return undefined;
    }
    return payload as unknown as AccessClaims & { exp: number };
  } catch {
    return undefined;
  }
};

/** Whether a bearer is shaped like a JWT (identity access tokens are opaque `kw_…` strings). */
export const isJwtShaped = (bearer: string) => bearer.startsWith("eyJ") && bearer.split(".").length === 3;

/** Whether an Authorization header carries a person's access token rather than an identity's. */
export const isSessionAuthorization = (authorization: string | undefined) =>
  authorization !== undefined && /^bearer\s+eyJ[^.\s]*\.[^.\s]*\.[^.\s]*\s*$/i.test(authorization);
