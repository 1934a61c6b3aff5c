import type { Request, Response } from "express";

/**
 * The refresh cookie `jid`: HttpOnly (never readable by script), SameSite=Strict, Secure wherever
 * the browser would send it back (https, or a loopback host), and scoped to the session routes.
 */
export const REFRESH_COOKIE = "jid";
const REFRESH_PATH = "/api/v1/auth";

/** The sign-in binding cookie: Lax, because the provider's redirect back is a cross-site navigation. */
export const SIGN_IN_COOKIE = "kw_sso";
const SIGN_IN_PATH = "/api/v1/sso";

const LOOPBACK_HOSTS = /^(localhost|127\.\d+\.\d+\.\d+|\[::1\])(:\d+)?$/i;

const isSecureContext = (req: Request, publicUrl: string | undefined) =>
  req.secure || (publicUrl?.startsWith("https:") ?? false) || LOOPBACK_HOSTS.test(req.get("host") ?? "");

type CookieOptions = { path: string; maxAgeSeconds: number; sameSite: "Strict" | "Lax" };

const serialize = (name: string, value: string, secure: boolean, options: CookieOptions) =>
  [
    `${name}=${value}`,
    `Path=${options.path}`,
    `Max-Age=${options.maxAgeSeconds}`,
    "HttpOnly",
    `SameSite=${options.sameSite}`,
    ...(secure ? ["Secure"] : []),
  ].join("; ");

const appendCookie = (res: Response, cookie: string) => {
  const existing = res.getHeader("Set-Cookie");
  const list = existing === undefined ? [] : Array.isArray(existing) ? existing : [String(existing)];
  res.setHeader("Set-Cookie", [...list, cookie]);
};

const REFRESH: CookieOptions = { path: REFRESH_PATH, maxAgeSeconds: 0, sameSite: "Strict" };
const SIGN_IN: CookieOptions = { path: SIGN_IN_PATH, maxAgeSeconds: 0, sameSite: "Lax" };

/** Set (or with `maxAgeSeconds` 0 and an empty value, clear) one of the two cookies. */
const cookieSetter =
  (name: string, options: CookieOptions) =>
  (req: Request, res: Response, publicUrl: string | undefined, value: string, maxAgeSeconds: number) =>
    appendCookie(res, serialize(name, value, isSecureContext(req, publicUrl), { ...options, maxAgeSeconds }));

export const setRefreshCookie = cookieSetter(REFRESH_COOKIE, REFRESH);
export const clearRefreshCookie = (req: Request, res: Response, publicUrl: string | undefined) =>
  setRefreshCookie(req, res, publicUrl, "", 0);

export const setSignInCookie = cookieSetter(SIGN_IN_COOKIE, SIGN_IN);
export const clearSignInCookie = (req: Request, res: Response, publicUrl: string | undefined) =>
  setSignInCookie(req, res, publicUrl, "", 0);

/**
 * The e-mail proof cookie: binds a sign-in that waits for the code mailed to the person to the
 * browser that signed in. Strict: the code is posted from the console, on this site.
 */
export const EMAIL_PROOF_COOKIE = "kw_sso_proof";
const EMAIL_PROOF: CookieOptions = { path: SIGN_IN_PATH, maxAgeSeconds: 0, sameSite: "Strict" };
export const setEmailProofCookie = cookieSetter(EMAIL_PROOF_COOKIE, EMAIL_PROOF);
export const clearEmailProofCookie = (req: Request, res: Response, publicUrl: string | undefined) =>
  setEmailProofCookie(req, res, publicUrl, "", 0);

/** One cookie's value from the request's Cookie header (values here are base64url: no decoding needed). */
export const cookieOf = (req: Request, name: string): string | undefined => {
  const header = req.headers.cookie;
  if (!header || header.length > 8192) return undefined;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim() || undefined;
  }
  return undefined;
};
