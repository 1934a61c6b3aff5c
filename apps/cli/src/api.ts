import { createKeywardClient, isKeywardError, ok, type KeywardClient } from "@keyward/client";
import { CliError, resolveConnection } from "./config";

/** A client together with the base URL it talks to, so every failure can say where it went. */
export type Api = { url: string; client: KeywardClient };

export const connectTo = (url: string, token?: string): Api => ({
  url,
  client: createKeywardClient({ baseUrl: url, token }),
});

export const connect = (needToken = true): Api => {
  const { url, token } = resolveConnection(needToken);
  return connectTo(url, token);
};

/** fetch reports a refused connection, an unknown host or a bad URL as a TypeError whose cause says which. */
const unreachable = (url: string, error: TypeError) => {
  const cause = error.cause instanceof Error ? error.cause.message : undefined;
  return new CliError(`Cannot reach Keyward at ${url}: ${cause ?? error.message}`);
};

/** The server's response whatever its status, or a CliError naming the URL when none came. */
export const send = async <R>(api: Api, request: (client: KeywardClient) => Promise<R>): Promise<R> => {
  try {
    return await request(api.client);
  } catch (error) {
    if (error instanceof TypeError) throw unreachable(api.url, error);
    throw error;
  }
};

/** The body of a success, or a CliError carrying the server's message (401 says the token is the problem). */
export const bodyOf = async <R extends { status: number; body: unknown }>(response: R) => {
  try {
    return await ok(response);
  } catch (error) {
    if (isKeywardError(error)) {
      if (error.status === 401)
        throw new CliError(`Unauthorized: the access token is wrong, expired or revoked (${error.message})`);
      throw new CliError(`${error.status} ${error.body?.error ?? "Error"}: ${error.message}`);
    }
    throw error;
  }
};

/** Send a request and take the body of its success (see bodyOf and send for the failures). */
export const call = async <R extends { status: number; body: unknown }>(
  api: Api,
  request: (client: KeywardClient) => Promise<R>,
) => bodyOf(await send(api, request));
