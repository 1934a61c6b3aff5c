import type { Request, RequestHandler } from "express";
import { isAppRoute, type AppRoute, type AppRouter } from "@ts-rest/core";
import { emptyOptionalQueryDropper, type RouteMetadata } from "@keyward/contract";
import type { AppDeps } from "../context";
import { authenticateBearer } from "../modules/sessions/session.service";
import { auditSpecOf, type AuditSpec } from "../modules/audit/audit-events";
import { openAuditScope } from "../modules/audit/audit-scope";
import { clientIpOf } from "../http/authenticate";
import { limitOfRoute, spendRateLimit, type Limit } from "./rate-limit";
import { illFormedStringsError } from "../http/well-formed";
import { bodyMediaTypeCheck } from "./body-media-type";

/** What every request of one contract route goes through before ts-rest validates it; built once per route. */
type RoutePlan = {
  /** For a route with a body: a body of a type no parser read is a 415 (body-media-type.ts). */
  checkMediaType: ReturnType<typeof bodyMediaTypeCheck>;
  isPublic: boolean;
  limit: Limit | undefined;
  audit: AuditSpec | undefined;
  dropEmptyQuery: ((query: Record<string, unknown>) => void) | undefined;
};

/** Each route of a contract with its `a.b.c` operation name. */
export const routesOf = (router: AppRouter, prefix = ""): [AppRoute, string][] =>
  Object.entries(router).flatMap(([key, value]) =>
    isAppRoute(value) ? [[value, `${prefix}${key}`] as [AppRoute, string]] : routesOf(value, `${prefix}${key}.`),
  );

type TsRestRequest = Request & { tsRestRoute?: AppRoute };

/**
 * The one middleware ts-rest runs before each route's handler, in this order: the body's media
 * type (415, like the body parser's 400 and 413 before it: nothing about the request is read from a
 * body no parser took), the route's rate
 * limit (counted before the credential is looked at), authentication (so 401/403 win over 422), the
 * audit scope of a recorded operation, optional query parameters sent empty
 * dropped (they mean "not sent"), and the well-formed-text rule (422).
 * The plan of each route is decided when the app is built, so a request pays only for the steps
 * its route has.
 */
export const routeEntry = (deps: AppDeps, contract: AppRouter): RequestHandler => {
  const plans = new Map<AppRoute, RoutePlan>();
  for (const [route, operation] of routesOf(contract)) {
    plans.set(route, {
      checkMediaType: bodyMediaTypeCheck(route),
      isPublic: (route.metadata as RouteMetadata | undefined)?.public === true,
      limit: limitOfRoute(route),
      audit: auditSpecOf(operation),
      dropEmptyQuery: emptyOptionalQueryDropper(route),
    });
  }

  return (req, res, next) => {
    const route = (req as TsRestRequest).tsRestRoute;
    const plan = route && plans.get(route);
    if (!plan) return next(new Error(`route ${req.method} ${req.path} has no entry plan`));
    const unsupported = plan.checkMediaType?.(req);
    if (unsupported) return next(unsupported);
    const enter = () => {
      try {
        plan.dropEmptyQuery?.(req.query);
        const invalid = illFormedStringsError(req);
        if (plan.audit) openAuditScope(deps, plan.audit, req, res);
        next(invalid);
      } catch (error) {
        next(error);
      }
    };
    const authenticated = () => {
      if (plan.isPublic) return enter();
      authenticateBearer(deps, req.headers.authorization, clientIpOf(req)).then((actor) => {
        req.actor = actor;
        enter();
      }, next);
    };
    const perWindow = plan.limit?.perWindow(deps) ?? 0;
    if (perWindow > 0) spendRateLimit(deps, plan.limit!, perWindow, req).then(authenticated, next);
    else authenticated();
  };
};
