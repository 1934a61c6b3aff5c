import { initClient, type InitClientReturn } from "@ts-rest/core";
import { contract, type Contract } from "@keyward/contract";

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

/** The arguments `createKeywardClient` hands to ts-rest; they shape the call types (headers stay optional). */
type ClientArgs = {
  baseUrl: string;
  baseHeaders: Record<string, string>;
  validateResponse: boolean;
  throwOnUnknownStatus: boolean;
};

/**
 * A client whose every call is typed by the contract. Named, not inferred: the inferred type of the
 * whole API is longer than the compiler will write into a declaration file (TS7056).
 */
export type KeywardClient = InitClientReturn<Contract, ClientArgs>;

/** A client whose every call is typed by the contract: `client.identities.get({ params })`. */
export const createKeywardClient = ({
  baseUrl,
  token,
  headers = {},
  validateResponse = false,
  throwOnUnknownStatus = true,
}: KeywardClientOptions): KeywardClient =>
  initClient(contract, {
    baseUrl: baseUrl.replace(/\/+$/, ""),
    baseHeaders: token ? { ...headers, authorization: `Bearer ${token}` } : headers,
    validateResponse,
    throwOnUnknownStatus,
  } satisfies ClientArgs);
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
