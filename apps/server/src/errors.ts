/** The error family: each carries its HTTP status and the `error` name of the spec's body. */
export class AppError extends Error {
  /** Sent as `Retry-After` (seconds) when set. */
  retryAfterSeconds?: number;

  constructor(
    readonly statusCode: number,
    readonly errorName: string,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
  }
}

export class BadRequestError extends AppError {
  constructor(message: string, name = "BadRequest", details?: unknown) {
    super(400, name, message, details);
  }
}

export class UnauthorizedError extends AppError {
  constructor(message = "You are not allowed to access this resource") {
    super(401, "UnauthorizedError", message);
  }
}

export class ForbiddenError extends AppError {
  constructor(message = "You are not allowed to access this resource", name = "ForbiddenError", details?: unknown) {
    super(403, name, message, details);
  }
}

export class NotFoundError extends AppError {
  constructor(message = "The requested entity is not found") {
    super(404, "NotFound", message);
  }
}

export class PermissionDeniedError extends AppError {
  constructor(action: string, subject: string, details: unknown) {
    super(403, "PermissionDenied", `You are not allowed to ${action} on ${subject}`, details);
  }
}

export class PermissionBoundaryError extends AppError {
  constructor(message: string, missingPermissions: unknown[]) {
    super(403, "PermissionBoundaryError", message, { missingPermissions });
  }
}

/** Well-formed input whose processing would exceed a bound (expansion size, nodes of a tree). */
export class UnprocessableEntityError extends AppError {
  constructor(message: string) {
    super(422, "UnprocessableEntity", message);
  }
}

/** A request body of a media type the route does not read (JSON is; forms are on login routes). */
export class UnsupportedMediaTypeError extends AppError {
  constructor(message: string) {
    super(415, "UnsupportedMediaType", message);
  }
}

export class TooManyRequestsError extends AppError {
  constructor(retryAfterSeconds: number, message = "Too many requests; please retry later") {
    super(429, "TooManyRequests", message);
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

export class ConflictError extends AppError {
  constructor(message: string) {
    super(409, "Conflict", message);
  }
}

/** Something the request needs is briefly out of reach (the HSM, a key another instance just made): retry shortly. */
export class ServiceUnavailableError extends AppError {
  constructor(message: string, retryAfterSeconds = 2) {
    super(503, "ServiceUnavailable", message);
    this.retryAfterSeconds = retryAfterSeconds;
  }
}
