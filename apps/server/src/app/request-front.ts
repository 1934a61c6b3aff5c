import type { RequestHandler } from "express";
import type { AppDeps } from "../context";
import { newRequestId } from "../http/request-id";

/**
 * The first thing every request meets, as one middleware with one listener: its request id
 * (`x-request-id`), its place among the requests in flight (graceful shutdown), and, once its
 * response closes, its metrics and — at `info` — its log line. The log carries the path only, never
 * the query or body. A response whose connection went before it finished is counted in flight until
 * then but is neither measured nor logged (nothing was answered).
 */
export const requestFront = (deps: Pick<AppDeps, "lifecycle" | "metrics" | "logger">): RequestHandler => {
  const { lifecycle, metrics, logger } = deps;
  return (req, res, next) => {
    const started = performance.now();
    const reqId = newRequestId();
    res.locals.reqId = reqId;
    res.setHeader("x-request-id", reqId);
    lifecycle.opened(res);
    res.once("close", () => {
      lifecycle.closed(res);
      if (!res.writableFinished) return;
      const ms = performance.now() - started;
      const template = (req.route as { path?: unknown } | undefined)?.path;
      const route = typeof template === "string" ? `${req.baseUrl}${template}` : "unmatched";
      metrics.recordRequest(route, req.method, res.statusCode, ms / 1000);
      if (logger.isLevelEnabled("info")) {
        logger.info({ reqId, method: req.method, path: req.path, status: res.statusCode, ms });
      }
    });
    next();
  };
};
