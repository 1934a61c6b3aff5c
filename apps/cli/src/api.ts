import { createKeywardClient, isKeywardError, ok, type KeywardClient } from "@keyward/client";
import { CliError, resolveConnection } from "./config";

export const connect = (needToken = true): KeywardClient => {
  const { url, token } = resolveConnection(needToken);
  return createKeywardClient({ baseUrl: url, token });
};

/** The body of a success, or a CliError carrying the server's message (401 says the token is the problem). */
export const call = async <R extends { status: number; body: unknown }>(request: Promise<R>) => {
  try {
    return await ok(request);
  } catch (error) {
    if (isKeywardError(error)) {
      if (error.status === 401)
        throw new CliError(`Unauthorized: the access token is wrong, expired or revoked (${error.message})`);
      throw new CliError(`${error.status} ${error.body?.error ?? "Error"}: ${error.message}`);
    }
    if (error instanceof TypeError) throw new CliError(`Cannot reach Keyward: ${error.message}`);
    throw error;
  }
};
