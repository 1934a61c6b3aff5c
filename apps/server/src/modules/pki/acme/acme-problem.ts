/** An ACME error: answered as application/problem+json with the RFC 8555 error type. */
export class AcmeProblem extends Error {
  constructor(
    readonly type: string,
    detail: string,
    readonly status = 400,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(detail);
  }

  toJSON() {
    return {
      type: `urn:ietf:params:acme:error:${this.type}`,
      detail: this.message,
      status: this.status,
      ...this.extra,
    };
  }
}

export const malformed = (detail: string, status = 400) => new AcmeProblem("malformed", detail, status);
export const unauthorized = (detail: string) => new AcmeProblem("unauthorized", detail, 403);
export const notFound = (what: string) => new AcmeProblem("malformed", `${what} not found`, 404);
export const badNonce = () => new AcmeProblem("badNonce", "The nonce is missing, unknown, used or expired");
export const accountDoesNotExist = () => new AcmeProblem("accountDoesNotExist", "No account exists for this key");
export const externalAccountRequired = () =>
  new AcmeProblem("externalAccountRequired", "This profile requires external account binding");
export const badSignatureAlgorithm = (algorithms: string[]) =>
  new AcmeProblem("badSignatureAlgorithm", "The JWS algorithm is not supported", 400, { algorithms });
export const orderNotReady = (status: string) =>
  new AcmeProblem("orderNotReady", `The order is ${status}, not ready to be finalized`, 403);
export const badCsr = (detail: string) => new AcmeProblem("badCSR", detail);
export const rejectedIdentifier = (detail: string) => new AcmeProblem("rejectedIdentifier", detail);
export const unsupportedIdentifier = (detail: string) => new AcmeProblem("unsupportedIdentifier", detail);
