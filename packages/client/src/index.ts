import { initClient } from "@ts-rest/core";
import { contract } from "@keyward/contract";

export type KeywardClientOptions = {
  baseUrl: string;
  /** An identity access token; omit for the public routes (bootstrap, logins, status). */
  token?: string;
  headers?: Record<string, string>;
};

/** A client whose every call is typed by the contract: `client.identities.get({ params })`. */
export const createKeywardClient = ({ baseUrl, token, headers = {} }: KeywardClientOptions) =>
  initClient(contract, {
    baseUrl,
    baseHeaders: token ? { ...headers, authorization: `Bearer ${token}` } : headers,
    validateResponse: false,
    throwOnUnknownStatus: false,
  });

export type KeywardClient = ReturnType<typeof createKeywardClient>;
export { contract };
