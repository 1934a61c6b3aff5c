/**
 * A destination refused or failed a call. The message names the operation, the key and the
 * destination's error code only: never a value, a credential or the body the destination answered.
 */
export class DestinationError extends Error {
  override name = "DestinationError";
  constructor(
    readonly operation: string,
    readonly key: string | undefined,
    readonly code: string,
    /** False when trying again cannot help (a limit of the destination, a bad configuration). */
    readonly retryable = true,
  ) {
    super(`${operation}${key ? ` "${key}"` : ""} failed: ${code}`);
  }
}

/** The name is taken at the destination by a secret this sync did not write (created since it was listed). */
export class DestinationConflict extends Error {
  override name = "DestinationConflict";
  constructor(readonly key: string) {
    super(`"${key}" was created at the destination by someone else`);
  }
}

/** An AWS SDK error (or a transport error) as a DestinationError: its AWS error code and HTTP status. */
export const awsFailure = (operation: string, key: string | undefined, error: unknown) => {
  if (error instanceof DestinationError || error instanceof DestinationConflict) return error;
  const named = error as { name?: string; $metadata?: { httpStatusCode?: number }; code?: string };
  const status = named.$metadata?.httpStatusCode;
  const code = named.name && named.name !== "Error" ? named.name : (named.code ?? "the request could not be sent");
  return new DestinationError(operation, key, status ? `${code} (HTTP ${status})` : code);
};

/** The AWS error name of an SDK error, if it is one. */
export const awsCode = (error: unknown) => (error as { name?: string }).name;
