import { createKeywardClient, type KeywardClient } from "@keyward/client";

/** A failed call: the server's status and its body's `message` in plain words. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

type Issue = { message?: unknown; path?: unknown };

/** The body's `message`: a string, or (422) the list of validation issues, each with its field. */
export const messageOf = (body: unknown, status: number): string => {
  const message = (body as { message?: unknown } | null)?.message;
  if (typeof message === "string" && message.length > 0) return message;
  if (Array.isArray(message)) {
    return (message as Issue[])
      .map((issue) => {
        const path = Array.isArray(issue.path) && issue.path.length > 0 ? `${issue.path.join(".")}: ` : "";
        return `${path}${typeof issue.message === "string" ? issue.message : "invalid"}`;
      })
      .join("; ");
  }
  return `The server answered ${status}`;
};

/** Unwrap a ts-rest answer: the body on 200, else an ApiError carrying the server's message. */
export const ok = async <R extends { status: number; body: unknown }>(
  call: Promise<R>,
): Promise<Extract<R, { status: 200 }>["body"]> => {
  let response: R;
  try {
    response = await call;
  } catch (error) {
    throw new ApiError(0, `The server could not be reached: ${(error as Error).message}`);
  }
  if (response.status !== 200) throw new ApiError(response.status, messageOf(response.body, response.status));
  return response.body;
};

/** The console talks to the server it was loaded from. */
export const apiClient = (token?: string): KeywardClient =>
  createKeywardClient({ baseUrl: window.location.origin, token, throwOnUnknownStatus: false });
