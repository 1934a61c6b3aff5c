import { createKeywardClient, isKeywardError, ok, type KeywardClient } from "@keyward/client";
import { CliError, resolveConnection, unreachable } from "./config";
import { currentSessionToken, isPersonProfile, renewSession } from "./session";

/**
 * A client together with the base URL it talks to, so every failure can say where it went. For a
 * person's stored session, `renew` replaces the client's token once (after a 401).
 */
export type Api = { url: string; client: KeywardClient; renew?: () => Promise<void> };

export const connectTo = (url: string, token?: string): Api => ({
  url,
  client: createKeywardClient({ baseUrl: url, token }),
});

/**
 * The API with the caller's token. A person's stored session is renewed first when its access
 * token expires within 30 seconds, and once more if the server still answers 401.
 */
export const connect = async (needToken = true): Promise<Api> => {
  const { url, token, profile, tokenSource } = resolveConnection(needToken);
  if (tokenSource !== "profile" || !isPersonProfile(profile)) return connectTo(url, token);
  let sessionToken = await currentSessionToken(profile);
  const api = connectTo(url, sessionToken);
  api.renew = async () => {
    api.renew = undefined;
    sessionToken = (await renewSession(sessionToken)).token;
    api.client = createKeywardClient({ baseUrl: url, token: sessionToken });
  };
  return api;
};

const isUnauthorized = (response: unknown) =>
  typeof response === "object" && response !== null && (response as { status?: unknown }).status === 401;

/** The server's response whatever its status, or a CliError naming the URL when none came. */
export const send = async <R>(api: Api, request: (client: KeywardClient) => Promise<R>): Promise<R> => {
  try {
    const response = await request(api.client);
    if (!api.renew || !isUnauthorized(response)) return response;
    await api.renew();
    return await request(api.client);
  } catch (error) {
    if (error instanceof TypeError) throw unreachable(api.url, error);
    throw error;
  }
};

/** A refusal from the server: its status, error name and message, for a caller that can say more. */
export class ServerError extends CliError {
  constructor(
    message: string,
    readonly status: number,
    readonly serverMessage: string,
  ) {
    super(message);
  }
}

/** What the server says when a universal-auth login's client id or secret does not match. */
const INVALID_CREDENTIALS = "Invalid credentials";

/**
 * The body of a success, or a ServerError carrying the server's message. A 401 names the server's
 * reason; for a login (`login` names it) it is the credentials that failed, not an access token.
 */
export const bodyOf = async <R extends { status: number; body: unknown }>(response: R, login?: string) => {
  try {
    return await ok(response);
  } catch (error) {
    if (isKeywardError(error)) {
      const said = error.message;
      if (error.status === 401 && login !== undefined) {
        const cause = said === INVALID_CREDENTIALS ? `invalid client id or secret (the server says: ${said})` : said;
        throw new ServerError(`${login} failed: ${cause}`, 401, said);
      }
      if (error.status === 401)
        throw new ServerError(`Unauthorized: the server refused the access token: ${said}`, 401, said);
      throw new ServerError(`${error.status} ${error.body?.error ?? "Error"}: ${said}`, error.status, said);
    }
    throw error;
  }
};

/** Send a request and take the body of its success (see bodyOf and send for the failures). */
export const call = async <R extends { status: number; body: unknown }>(
  api: Api,
  request: (client: KeywardClient) => Promise<R>,
  login?: string,
) => bodyOf(await send(api, request), login);
