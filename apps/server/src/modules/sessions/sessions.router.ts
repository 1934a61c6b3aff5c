import { initServer } from "@ts-rest/express";
import { contract } from "@keyward/contract";
import type { AppDeps } from "../../context";
import { UnauthorizedError } from "../../errors";
import { clientIpOf, contextOf, publicContextOf } from "../../http/authenticate";
import { ok } from "../../http/respond";
import { clearRefreshCookie, cookieOf, REFRESH_COOKIE, setRefreshCookie } from "./session-cookie";
import { endSession, refreshSession, startCliSession } from "./session.service";

const s = initServer();

/** The console's session routes: the refresh token comes and goes only as the `jid` cookie. */
export const sessionsRouter = (deps: AppDeps) =>
  s.router(contract.sessions, {
    refresh: async ({ req, res }) => {
      try {
        const tokens = await refreshSession(publicContextOf(deps, req, res), cookieOf(req, REFRESH_COOKIE));
        setRefreshCookie(req, res, deps.env.PUBLIC_URL, tokens.refreshToken, deps.env.SESSION_IDLE_TTL_S);
        return ok({ token: tokens.accessToken, expiresIn: tokens.expiresIn });
      } catch (error) {
        clearRefreshCookie(req, res, deps.env.PUBLIC_URL);
        throw error;
      }
    },
    logout: async ({ req, res }) => {
      await endSession(publicContextOf(deps, req, res), cookieOf(req, REFRESH_COOKIE));
      clearRefreshCookie(req, res, deps.env.PUBLIC_URL);
      return ok({ message: "Signed out" });
    },
    // The presented refresh token is spent: the console gets its next one as the cookie, the
    // command line its own session's tokens in the body.
    cliSession: async ({ req, res }) => {
      const tokens = await startCliSession(publicContextOf(deps, req, res), cookieOf(req, REFRESH_COOKIE), {
        ip: clientIpOf(req),
        userAgent: req.headers["user-agent"] ?? "",
      }).catch((error: unknown) => {
        if (error instanceof UnauthorizedError) clearRefreshCookie(req, res, deps.env.PUBLIC_URL);
        throw error;
      });
      setRefreshCookie(req, res, deps.env.PUBLIC_URL, tokens.presenterRefreshToken, deps.env.SESSION_IDLE_TTL_S);
      return ok({
        email: tokens.email,
        accessToken: tokens.accessToken,
        refreshToken: tokens.refreshToken,
        expiresIn: tokens.expiresIn,
      });
    },
    checkAuth: async ({ req, res }) => {
      contextOf(deps, req, res);
      return ok({ message: "Authenticated" });
    },
  });
