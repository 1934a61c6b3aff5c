import { CliError, readProfile, unreachable, withProfileLock, writeProfile, type Profile } from "./config";

/** A person's access token is renewed when it has less than this left. */
const RENEW_MARGIN_MS = 30_000;

/** The `exp` of a JWT, read without verifying it (the server verifies); undefined when there is none. */
export const jwtExpiry = (token: string): number | undefined => {
  const payload = token.split(".")[1];
  if (token.split(".").length !== 3 || !payload) return undefined;
  try {
    const claims = JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as { exp?: unknown };
    return typeof claims.exp === "number" ? claims.exp : undefined;
  } catch {
    return undefined;
  }
};

/** Whether a bearer is a person's session token (identity access tokens are opaque strings). */
export const isSessionToken = (token: string) => token.startsWith("eyJ") && token.split(".").length === 3;

const expiresSoon = (token: string) => {
  const exp = jwtExpiry(token);
  return exp !== undefined && exp * 1000 - Date.now() <= RENEW_MARGIN_MS;
};

export const isPersonProfile = (profile: Profile | undefined): profile is Profile & { refreshToken: string } =>
  profile?.method === "user" && typeof profile.refreshToken === "string";

/** A POST to a session route with the refresh token as the `jid` cookie, as the console's browser sends it. */
export const postWithRefreshCookie = async (url: string, path: string, refreshToken: string) => {
  try {
    return await fetch(`${url.replace(/\/+$/, "")}${path}`, {
      method: "POST",
      headers: { cookie: `jid=${refreshToken}` },
    });
  } catch (error) {
    if (error instanceof TypeError) throw unreachable(url, error);
    throw error;
  }
};

/** The new refresh token the server set (`jid`), if it set one. */
const rotatedRefreshToken = (response: Response) => {
  for (const line of response.headers.getSetCookie()) {
    const match = /^\s*jid=([^;]*)/.exec(line);
    if (match?.[1]) return match[1];
  }
  return undefined;
};

const messageOf = async (response: Response) => {
  try {
    const body = (await response.json()) as { message?: unknown };
    return typeof body.message === "string" ? body.message : response.statusText;
  } catch {
    return response.statusText;
  }
};

const SESSION_ENDED = "Your session has ended (expired, revoked or signed out elsewhere); run `keyward login` again";

/**
 * A fresh access token for the stored session. Under the profile lock: when another keyward
 * renewed it meanwhile (the stored token is no longer `stale`), that token is used as it is;
 * otherwise the refresh token is spent and the rotated one stored at once (the profile is
 * replaced atomically), since the old one will never work again.
 */
export const renewSession = (stale: string): Promise<Profile> =>
  withProfileLock(async () => {
    const profile = readProfile();
    if (!isPersonProfile(profile)) throw new CliError("Not logged in as a person: run `keyward login`");
    if (profile.token !== stale && !expiresSoon(profile.token)) return profile;
    const response = await postWithRefreshCookie(profile.url, "/api/v1/auth/token", profile.refreshToken);
    if (response.status === 401 || response.status === 403) throw new CliError(SESSION_ENDED);
    if (!response.ok) {
      throw new CliError(`Renewing the session failed: ${response.status} ${await messageOf(response)}`);
    }
    const { token } = (await response.json()) as { token: string; expiresIn: number };
    const refreshToken = rotatedRefreshToken(response);
    if (!refreshToken) throw new CliError("Renewing the session failed: the server sent no new refresh token");
    const renewed: Profile = { ...profile, token, refreshToken };
    writeProfile(renewed);
    return renewed;
  });

/** The stored person's access token, renewed first when it expires within 30 seconds. */
export const currentSessionToken = async (profile: Profile) =>
  expiresSoon(profile.token) ? (await renewSession(profile.token)).token : profile.token;
