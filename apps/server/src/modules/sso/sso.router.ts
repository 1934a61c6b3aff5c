import { Router, type NextFunction, type Request, type Response } from "express";
import { initServer } from "@ts-rest/express";
import { contract } from "@keyward/contract";
import type { AppDeps } from "../../context";
import { clientIpOf, contextOf, publicContextOf } from "../../http/authenticate";
import { publicBaseOf } from "../../http/public-base";
import { ok } from "../../http/respond";
import { AppError, BadRequestError } from "../../errors";
import {
  clearEmailProofCookie,
  clearSignInCookie,
  cookieOf,
  EMAIL_PROOF_COOKIE,
  setEmailProofCookie,
  setRefreshCookie,
  setSignInCookie,
  SIGN_IN_COOKIE,
} from "../sessions/session-cookie";
import { confirmEmailProof } from "./email-link.service";
import { createOidcConfig, getOidcConfig, updateOidcConfig } from "./oidc-config.service";
import { beginSignIn, completeSignIn } from "./sso-login.service";

const s = initServer();

export const ssoRouter = (deps: AppDeps) =>
  s.router(contract.sso, {
    getOidcConfig: async ({ query, req, res }) =>
      ok(await getOidcConfig(contextOf(deps, req, res), query.organizationId)),
    createOidcConfig: async ({ body, req, res }) => ok(await createOidcConfig(contextOf(deps, req, res), body)),
    updateOidcConfig: async ({ body, req, res }) => ok(await updateOidcConfig(contextOf(deps, req, res), body)),
    verifyEmailCode: async ({ body, req, res }) => {
      try {
        const result = await confirmEmailProof(
          publicContextOf(deps, req, res),
          { binding: cookieOf(req, EMAIL_PROOF_COOKIE), code: body.code },
          { ip: clientIpOf(req), userAgent: req.headers["user-agent"] ?? "" },
        );
        clearEmailProofCookie(req, res, deps.env.PUBLIC_URL);
        setRefreshCookie(req, res, deps.env.PUBLIC_URL, result.refreshToken, deps.env.SESSION_IDLE_TTL_S);
        return ok({ redirectTo: consolePathAfterSignIn(result) });
      } catch (error) {
        if (error instanceof AppError && error.statusCode === 401) clearEmailProofCookie(req, res, deps.env.PUBLIC_URL);
        throw error;
      }
    },
  });

/** Where the console goes once signed in: a fixed, same-origin path, never taken from the request. */
const consolePathAfterSignIn = (result: { callbackPort: number | null; callbackState: string | null }) =>
  result.callbackPort === null
    ? "/"
    : `/login/cli?callback_port=${result.callbackPort}` +
      (result.callbackState ? `&callback_state=${result.callbackState}` : "");

export const SSO_MOUNT = "/api/v1/sso/oidc";

const callbackUrl = (deps: AppDeps, req: Request) => `${publicBaseOf(deps.env.PUBLIC_URL, req)}${SSO_MOUNT}/callback`;

const queryText = (req: Request, name: string) => {
  const value = req.query[name];
  return typeof value === "string" ? value : undefined;
};

/** The loopback listener of the command line a sign-in is begun for: its port, and `keyward login`'s one-time state. */
const callbackOf = (req: Request) => {
  const port = queryText(req, "callbackPort") ?? queryText(req, "callback_port");
  const callbackPort = port === undefined ? undefined : Number(port);
  if (callbackPort !== undefined && !(Number.isInteger(callbackPort) && callbackPort > 0 && callbackPort < 65536)) {
    throw new BadRequestError("callbackPort must be a port number");
  }
  const callbackState = queryText(req, "callbackState");
  if (callbackState !== undefined && !/^[\w-]{16,128}$/.test(callbackState)) {
    throw new BadRequestError("callbackState must be 16 to 128 letters, digits, '-' or '_'");
  }
  return { callbackPort, callbackState };
};

/** A well-formed listener of the request as the console's query (`callback_port`, `callback_state`); none otherwise. */
const callbackQueryOf = (req: Request): Record<string, string> => {
  try {
    const { callbackPort, callbackState } = callbackOf(req);
    if (callbackPort === undefined) return {};
    return { callback_port: String(callbackPort), ...(callbackState ? { callback_state: callbackState } : {}) };
  } catch {
    return {};
  }
};

/**
 * The browser's side of single sign-on: plain redirects, outside the JSON contract. `login` sends
 * the browser to the provider; `callback` comes back with the code, sets the refresh cookie and
 * sends the browser into the console, which asks `POST /api/v1/auth/token` for an access token.
 * No token ever travels in a URL. A sign-in begun by `keyward login` names the port (and one-time
 * state) of its loopback listener; the console's `/login/cli` page hands that listener a session.
 */
export const ssoBrowserRoutes = (deps: AppDeps) => {
  const router = Router();
  /**
   * A person's browser lands on the console's sign-in page with the reason, never on a JSON page;
   * other clients get the JSON error body. The page is a fixed path: nothing of the request but the
   * organization's slug, a command line's listener (a port number and its state, so the sign-in tried
   * again still hands that listener the session) and the message is carried.
   */
  const refused = (req: Request, res: Response, next: NextFunction) => (error: unknown) => {
    if (req.accepts(["json", "html"]) !== "html") return next(error);
    const message = error instanceof AppError && error.statusCode < 500 ? error.message : "Single sign-on failed";
    const org = queryText(req, "orgSlug");
    const query = new URLSearchParams({
      ...(org && org.length <= 64 ? { org } : {}),
      sso_error: message,
      ...callbackQueryOf(req),
    });
    res.redirect(302, `${publicBaseOf(deps.env.PUBLIC_URL, req)}/login?${query.toString()}`);
  };
  router.get("/login", (req, res, next) => {
    void (async () => {
      const orgSlug = queryText(req, "orgSlug");
      if (!orgSlug || orgSlug.length > 64) throw new BadRequestError("orgSlug is required");
      const { callbackPort, callbackState } = callbackOf(req);
      const started = await beginSignIn(deps, {
        orgSlug,
        callbackPort,
        callbackState,
        redirectUri: callbackUrl(deps, req),
      });
      setSignInCookie(req, res, deps.env.PUBLIC_URL, started.binding, started.ttlSeconds);
      res.redirect(302, started.url);
    })().catch(refused(req, res, next));
  });
  router.get("/callback", (req, res, next) => {
    void (async () => {
      const result = await completeSignIn(
        deps,
        {
          code: queryText(req, "code"),
          state: queryText(req, "state"),
          error: queryText(req, "error"),
          binding: cookieOf(req, SIGN_IN_COOKIE),
          redirectUri: callbackUrl(deps, req),
        },
        {
          ipAddress: clientIpOf(req),
          userAgent: req.headers["user-agent"]?.slice(0, 512) ?? null,
          userAgentText: req.headers["user-agent"] ?? "",
        },
      );
      clearSignInCookie(req, res, deps.env.PUBLIC_URL);
      const base = publicBaseOf(deps.env.PUBLIC_URL, req);
      if ("emailProof" in result) {
        // The console asks for the code mailed to the person and posts it with this cookie.
        setEmailProofCookie(req, res, deps.env.PUBLIC_URL, result.emailProof.binding, result.emailProof.ttlSeconds);
        const query = new URLSearchParams({ org: result.orgSlug, sso_verify: "email" });
        res.redirect(302, `${base}/login?${query.toString()}`);
        return;
      }
      setRefreshCookie(req, res, deps.env.PUBLIC_URL, result.refreshToken, deps.env.SESSION_IDLE_TTL_S);
      res.redirect(302, `${base}${consolePathAfterSignIn(result)}`);
    })().catch(refused(req, res, next));
  });
  return router;
};
