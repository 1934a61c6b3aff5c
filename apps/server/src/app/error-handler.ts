import { STATUS_CODES } from "node:http";
import type { ErrorRequestHandler, RequestHandler } from "express";
import { RequestValidationError } from "@ts-rest/express";
import { NoResultError } from "kysely";
import { ZodError, type ZodIssue } from "zod";
import { AppError } from "../errors";
import { isForeignKeyViolation, isUniqueViolation } from "../db/errors";
import { isDatabaseUnavailable } from "../db/health";
import { RootKeyUnavailable } from "../crypto/root-keyring";
import { SealUnavailable } from "../crypto/root-seal";
import type { Logger } from "../lib/logger";

type Body = { reqId: string; statusCode: number; message: unknown; error: string; details?: unknown };

/** Issues in the reference's order: params, then body, then query, then headers. */
const validationIssues = (error: RequestValidationError): ZodIssue[] => [
  ...(error.pathParams?.issues ?? []),
  ...(error.body?.issues ?? []),
  ...(error.query?.issues ?? []),
  ...(error.headers?.issues ?? []),
];

/**
 * PostgreSQL refusing a value the request carried (a NUL character in text or JSON, a number out of
 * range, malformed text for a typed column) is the caller's error, whichever field it came in.
 */
const REJECTED_INPUT_CODES = new Set(["22021", "22P05", "22003", "22P02", "54000"]);
/** deadlock_detected and serialization_failure. */
const CONFLICT_CODES = new Set(["40P01", "40001"]);

/** The guard of a root-sealed column refused a value under a retired root-key version (migration 0042). */
const ROOT_KEY_RETIRED = "55KW1";

/** A database outage is usually a restart or failover: seconds, not minutes. */
const DB_RETRY_AFTER_SECONDS = 2;

/** `Not Found` -> `NotFound`: the error names of the spec's bodies have no spaces. */
const errorNameOf = (status: number) => (STATUS_CODES[status] ?? "Error").replace(/[^A-Za-z]/g, "");

/**
 * Errors raised before a handler runs, by Express's router (a path parameter that does not
 * percent-decode) or by the body parser (a body that does not inflate, an aborted upload): each
 * carries a 4xx status and is the caller's fault.
 */
const classifyTransportError = (error: unknown): Omit<Body, "reqId"> | undefined => {
  if (error instanceof URIError) return { statusCode: 400, error: "BadRequest", message: "Invalid URL encoding" };
  const { status, expose, code } = (error ?? {}) as { status?: unknown; expose?: unknown; code?: unknown };
  if (typeof status !== "number" || status < 400 || status > 499 || expose !== true) return undefined;
  if (typeof code === "string" && code.startsWith("Z_")) {
    return { statusCode: 400, error: "BadRequest", message: "The request body could not be decompressed" };
  }
  return { statusCode: status, error: errorNameOf(status), message: (error as Error).message || errorNameOf(status) };
};

const classify = (error: unknown): Omit<Body, "reqId"> | undefined => {
  if (error instanceof RequestValidationError) {
    return { statusCode: 422, error: "ValidationFailure", message: validationIssues(error) };
  }
  if (error instanceof ZodError) return { statusCode: 422, error: "ValidationFailure", message: error.issues };
  if (error instanceof AppError) {
    const body: Omit<Body, "reqId"> = { statusCode: error.statusCode, error: error.errorName, message: error.message };
    if (error.details !== undefined) body.details = error.details;
    return body;
  }
  const type = (error as { type?: string } | undefined)?.type;
  if (type === "entity.parse.failed") {
    return { statusCode: 400, error: "BadRequest", message: "The request body is not valid JSON" };
  }
  if (type === "entity.too.large") {
    return { statusCode: 413, error: "PayloadTooLarge", message: "The request body is larger than 1 MiB" };
  }
  if (type === "encoding.unsupported" || type === "charset.unsupported") {
    return { statusCode: 415, error: "UnsupportedMediaType", message: "Unsupported request body encoding" };
  }
  const transport = classifyTransportError(error);
  if (transport) return transport;
  // Unreachable, frozen, restarting or over its statement bound: the client may retry shortly. The
  // database layer logs the outage once; a log line per request would flood it.
  if (isDatabaseUnavailable(error)) {
    return {
      statusCode: 503,
      error: "ServiceUnavailable",
      message: "The database is unavailable or did not answer in time; please retry shortly",
    };
  }
  // A root key this process has not loaded yet, a write under a version just retired (the keyring is
  // refreshing), or the HSM out of reach: nothing was written, and a retry shortly succeeds.
  const pgCode = (error as { code?: unknown } | undefined)?.code;
  if (error instanceof RootKeyUnavailable || error instanceof SealUnavailable || pgCode === ROOT_KEY_RETIRED) {
    return {
      statusCode: 503,
      error: "ServiceUnavailable",
      message:
        error instanceof SealUnavailable
          ? "The HSM that seals the root keys is unavailable; please retry shortly"
          : "The root key changed while the request ran; please retry",
    };
  }
  if (typeof pgCode === "string" && REJECTED_INPUT_CODES.has(pgCode)) {
    return { statusCode: 400, error: "BadRequest", message: "The request contains a value the database cannot store" };
  }
  if (isUniqueViolation(error)) {
    return { statusCode: 400, error: "BadRequest", message: "A resource with these unique fields already exists" };
  }
  // A row the request refers to was deleted by a concurrent request (or one still refers to a row it deletes).
  if (isForeignKeyViolation(error)) {
    return {
      statusCode: 400,
      error: "BadRequest",
      message: "A related resource was changed or removed meanwhile; please try again",
    };
  }
  // The row the request changes was deleted by a concurrent request after it was looked up.
  if (error instanceof NoResultError) {
    return {
      statusCode: 404,
      error: "NotFound",
      message: "The resource was not found: it was deleted while the request was being handled",
    };
  }
  // PostgreSQL ended one of two transactions that waited on each other; nothing of it was written.
  if (typeof pgCode === "string" && CONFLICT_CODES.has(pgCode)) {
    return {
      statusCode: 409,
      error: "Conflict",
      message: "The request conflicted with a concurrent change and was not applied; please try again",
    };
  }
  return undefined;
};

/** Every error leaves as the spec's JSON body; unexpected ones as 500 with the cause only in the log. */
export const errorHandler =
  (logger: Logger): ErrorRequestHandler =>
  (error, req, res, _next) => {
    const reqId = (res.locals.reqId as string | undefined) ?? "req-unknown";
    const known = classify(error);
    if (!known) logger.error({ err: error, reqId, method: req.method, path: req.path }, "unhandled error");
    const body = known ?? { statusCode: 500, error: "InternalServerError", message: "Something went wrong" };
    // Too late for an error body: end the connection so the client sees a broken answer, not a hang.
    if (res.headersSent) return void req.socket.destroy();
    // The audit log records why a login was refused.
    res.locals.errorBody = body;
    if (body.statusCode === 503) res.setHeader("Retry-After", String(DB_RETRY_AFTER_SECONDS));
    if (error instanceof AppError && error.retryAfterSeconds !== undefined) {
      res.setHeader("Retry-After", String(error.retryAfterSeconds));
    }
    res.status(body.statusCode).json({ reqId, ...body });
  };

/**
 * Password logins of Infisical-compatible command lines (`infisical login -i`): Keyward holds no
 * passwords for people, who sign in through the browser. Refused with what to do instead.
 */
const PASSWORD_LOGIN = /^\/api\/v3\/auth\/login[12]?$/;

export const notFoundHandler: RequestHandler = (req, res) => {
  if (req.method === "POST" && PASSWORD_LOGIN.test(req.path)) {
    return void res.status(400).json({
      reqId: res.locals.reqId as string,
      statusCode: 400,
      error: "BadRequest",
      message:
        "Password login is not offered: people sign in through the browser. Run the login without " +
        "--interactive (it opens the console's sign-in page), or sign in at /login",
    });
  }
  res.status(404).json({
    reqId: res.locals.reqId as string,
    statusCode: 404,
    error: "Not Found",
    message: `Route ${req.method}:${req.path} not found`,
  });
};
