import type { Request } from "express";
import type { Actor, AppDeps, ChangeScope, PublicContext, RequestContext } from "../context";
import { normalizeIp } from "../lib/ip";

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      actor?: Actor;
      /** The caller's address as `clientIpOf` resolved it (trusted proxies applied), once per request. */
      clientIp?: string;
    }
  }
}

/** The parts of a request the context needs; ts-rest's typed request satisfies it. */
type RequestLike = Pick<Request, "actor" | "ip" | "socket" | "clientIp">;

/** Resolved on first use (authentication, the context, the rate limit and the audit event each ask). */
export const clientIpOf = (req: RequestLike) =>
  (req.clientIp ??= normalizeIp(req.ip ?? req.socket.remoteAddress ?? ""));

/** The service-facing view of an authenticated request. */
export const contextOf = (
  deps: AppDeps,
  req: RequestLike,
  res: { locals: Record<string, unknown> },
): RequestContext => {
  if (!req.actor) throw new Error("route needs authentication but no actor was resolved");
  return {
    deps,
    actor: req.actor,
    clientIp: clientIpOf(req),
    reqId: res.locals.reqId as string,
    scope: scopeOfResponse(res),
  };
};

export const publicContextOf = (
  deps: AppDeps,
  req: RequestLike,
  res: { locals: Record<string, unknown> },
): PublicContext => ({
  deps,
  clientIp: clientIpOf(req),
  reqId: res.locals.reqId as string,
  scope: scopeOfResponse(res),
});

const SCOPE_KEY = "changeScope";

/** The route entry attaches an audited request's scope to its response; `contextOf` hands it to services. */
export const attachScope = (res: { locals: Record<string, unknown> }, scope: ChangeScope) => {
  res.locals[SCOPE_KEY] = scope;
};

export const scopeOfResponse = (res: { locals: Record<string, unknown> }) =>
  res.locals[SCOPE_KEY] as ChangeScope | undefined;
