import { ErrorBodySchema, type ErrorBody } from "@keyward/contract";

/**
 * A response other than the success the caller expected, with the server's error body when it sent one;
 * or, with status 0, no response at all (`raw` is what the request failed with).
 */
export class KeywardError extends Error {
  override readonly name = "KeywardError";
  constructor(
    readonly status: number,
    /** The spec's error body (`reqId`, `statusCode`, `message`, `error`, `details?`), or undefined for a foreign one. */
    readonly body: ErrorBody | undefined,
    readonly raw: unknown,
  ) {
    super(KeywardError.describe(status, body, raw));
  }

  /** The server's message; for a 422, its validation issues joined on one line. */
  private static describe(status: number, body: ErrorBody | undefined, raw: unknown): string {
    if (status === 0) return `The server could not be reached: ${raw instanceof Error ? raw.message : String(raw)}`;
    if (!body) return `Keyward answered HTTP ${status}`;
    if (typeof body.message === "string") return body.message;
    return body.message.map((issue) => `${issue.path.join(".") || "(body)"}: ${issue.message}`).join("; ");
  }

  /** True for 401: the token is missing, wrong, expired or revoked. */
  get isUnauthorized(): boolean {
    return this.status === 401;
  }

  /** True for status 0: no answer came (refused, unknown host, offline, blocked by the browser). */
  get isUnreachable(): boolean {
    return this.status === 0;
  }
}

export const isKeywardError = (value: unknown): value is KeywardError => value instanceof KeywardError;

type AnyResponse = { status: number; body: unknown };
type SuccessOf<R extends AnyResponse> = Extract<R, { status: 200 | 201 | 202 | 204 }>;

/**
 * For callers who prefer exceptions: the body of a 2xx answer, or a thrown `KeywardError`.
 * `const { secrets } = await ok(client.secretsV3.list({ query }))`. A call that gets no answer
 * (fetch's TypeError) is a `KeywardError` with status 0; any other failure is thrown as it is.
 */
export const ok = async <R extends AnyResponse>(call: Promise<R> | R): Promise<SuccessOf<R>["body"]> => {
  let response: R;
  try {
    response = await call;
  } catch (error) {
    if (error instanceof TypeError) throw new KeywardError(0, undefined, error);
    throw error;
  }
  if (response.status >= 200 && response.status < 300) return response.body;
  const parsed = ErrorBodySchema.safeParse(response.body);
  throw new KeywardError(response.status, parsed.success ? parsed.data : undefined, response.body);
};
