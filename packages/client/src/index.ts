import { initClient } from "@ts-rest/core";
import { contract } from "@keyward/contract";

export type KeywardClientOptions = {
  baseUrl: string;
  /** An identity access token; omit for the public routes (bootstrap, logins, status). */
  token?: string;
  headers?: Record<string, string>;
  /** Parse every success body with the contract's schema (dates, defaults) and throw on a mismatch. */
  validateResponse?: boolean;
  /**
   * Throw on a status the contract does not declare (a proxy's 502, say). Defaults to true, which
   * is what makes the response types exact.
   */
  throwOnUnknownStatus?: boolean;
};

/** A client whose every call is typed by the contract: `client.identities.get({ params })`. */
export const createKeywardClient = ({
  baseUrl,
  token,
  headers = {},
  validateResponse = false,
  throwOnUnknownStatus = true,
}: KeywardClientOptions) =>
  initClient(contract, {
    baseUrl: baseUrl.replace(/\/+$/, ""),
    baseHeaders: token ? { ...headers, authorization: `Bearer ${token}` } : headers,
    validateResponse,
    throwOnUnknownStatus,
  });

export type KeywardClient = ReturnType<typeof createKeywardClient>;
export { contract };
export { KeywardError, isKeywardError, ok } from "./errors";
export type {
  Contract,
  ErrorBody,
  ValidationIssue,
  ProjectPermissionRule,
  ProjectPermissionAction,
  ProjectPermissionConditions,
  ProjectPermissionSubject,
} from "@keyward/contract";
export { UnknownStatusError, ResponseValidationError } from "@ts-rest/core";
