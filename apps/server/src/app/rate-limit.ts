import type { Request } from "express";
import type { AppDeps } from "../context";
import { TooManyRequestsError } from "../errors";
import { clientIpOf } from "../http/authenticate";
import { incrementRateLimitCounter } from "./rate-limit.repository";

export type Limit = { name: string; method: string; path: RegExp; perWindow: (deps: AppDeps) => number };

/** Routes that guess or spend credentials, event stream openings and secret reads; everything else is not limited. */
const LIMITS: Limit[] = [
  {
    name: "login",
    method: "POST",
    // Machine logins, and a person's answer to the sign-in code mailed to them (guesses a code).
    path: /^\/api\/v\d+\/(auth\/[a-z-]+-auth\/login|gateways\/login|gateways\/token-auth\/enroll|sso\/oidc\/verify-email)\/?$/,
    perWindow: (deps) => deps.env.RATE_LIMIT_LOGIN,
  },
  {
    name: "token",
    method: "POST",
    // Identity token renewal and revocation, and people's session refresh, sign-out and hand-off.
    path: /^\/api\/v1\/auth\/(token\/(renew|revoke)|token|logout|cli-session)\/?$/,
    perWindow: (deps) => deps.env.RATE_LIMIT_TOKEN,
  },
  {
    // Opening an events stream: a reconnect storm (every agent after an outage) is spread out.
    name: "event-subscribe",
    method: "POST",
    path: /^\/api\/v1\/events\/subscribe\//,
    perWindow: (deps) => deps.env.RATE_LIMIT_EVENT_SUBSCRIBE,
  },
  {
    name: "secret-read",
    method: "GET",
    // The secret routes of v3 and v4, and the project-wide search (which may return values).
    path: /^\/api\/(v[34]\/secrets(\/|$)|v1\/projects\/[^/]+\/secrets\/search\/?$)/,
    perWindow: (deps) => deps.env.RATE_LIMIT_SECRET_READ,
  },
];

/**
 * The OCSP responders' limit: they are mounted outside the contract and unauthenticated, and a
 * question not asked before costs a signature with the CA's key, so the responder spends this itself
 * once a request is one of its own (`ocspRouter`), before reading it.
 */
const OCSP_LIMIT: Pick<Limit, "name" | "perWindow"> = {
  name: "ocsp",
  perWindow: (deps) => deps.env.RATE_LIMIT_OCSP,
};

/** What `ocspRouter` calls for each OCSP request: resolves when it may go on, rejects with 429 past the limit. */
export const ocspRateLimit =
  (deps: AppDeps) =>
  (req: Request): Promise<void> => {
    const perWindow = OCSP_LIMIT.perWindow(deps);
    return perWindow > 0 ? spendRateLimit(deps, OCSP_LIMIT, perWindow, req) : Promise.resolve();
  };

/** The limit a contract route falls under, if any: decided once per route when the app is built. */
export const limitOfRoute = (route: { method: string; path: string }): Limit | undefined =>
  LIMITS.find((l) => l.method === route.method && l.path.test(route.path));

/**
 * A fixed-window counter per (limit, client IP) in PostgreSQL, so every worker and instance counts
 * against one figure: one upsert per limited request (the caller skips a limit whose `perWindow` is
 * 0: that turns it off). The client IP is the trusted-proxy-aware one. Resolves when the request may
 * go on, rejects with 429 past the limit; when the database cannot count, the request goes on (and
 * meets the outage itself, as a 503).
 */
export const spendRateLimit = async (
  deps: AppDeps,
  limit: Pick<Limit, "name">,
  perWindow: number,
  req: Request,
): Promise<void> => {
  const windowMs = deps.env.RATE_LIMIT_WINDOW_MS;
  const now = deps.clock.now();
  const windowStart = Math.floor(now / windowMs) * windowMs;
  const key = `${limit.name}:${clientIpOf(req)}`;
  const hits = await incrementRateLimitCounter(deps.db, key, new Date(windowStart)).catch(() => 0);
  if (hits <= perWindow) return;
  deps.metrics.rateLimited.inc({ limit: limit.name });
  throw new TooManyRequestsError(Math.max(1, Math.ceil((windowStart + windowMs - now) / 1_000)));
};
