import type { Request, RequestHandler } from "express";
import type { RouteMetadata } from "@keyward/contract";
import type { Actor, AppDeps, PublicContext, RequestContext } from "../context";
import { authenticate } from "../modules/access-tokens/access-token.service";
import { normalizeIp } from "../lib/ip";

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      actor?: Actor;
    }
  }
}

type TsRestRequest = Request & { tsRestRoute?: { metadata?: unknown } };

/** The parts of a request the context needs; ts-rest's typed request satisfies it. */
type RequestLike = Pick<Request, "actor" | "ip" | "socket">;

export const clientIpOf = (req: RequestLike) => normalizeIp(req.ip ?? req.socket.remoteAddress ?? "");

/** Runs before ts-rest validates, so 401/403 from authentication win over 422 (reference §0.1). */
export const authMiddleware =
  (deps: AppDeps): RequestHandler =>
  (req, _res, next) => {
    const metadata = (req as TsRestRequest).tsRestRoute?.metadata as RouteMetadata | undefined;
    if (metadata?.public) return next();
    authenticate(deps, req.headers.authorization, clientIpOf(req)).then((actor) => {
      req.actor = actor;
      next();
    }, next);
  };

/** The service-facing view of an authenticated request. */
export const contextOf = (
  deps: AppDeps,
  req: RequestLike,
  res: { locals: Record<string, unknown> },
): RequestContext => {
  if (!req.actor) throw new Error("route needs authentication but no actor was resolved");
  return { deps, actor: req.actor, clientIp: clientIpOf(req), reqId: res.locals.reqId as string };
};

export const publicContextOf = (
  deps: AppDeps,
  req: RequestLike,
  res: { locals: Record<string, unknown> },
): PublicContext => ({
  deps,
  clientIp: clientIpOf(req),
  reqId: res.locals.reqId as string,
});
