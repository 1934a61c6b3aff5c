import express, { type IRouter, type RequestHandler } from "express";

const METHODS = ["get", "post", "put", "patch", "delete"] as const;
type Method = (typeof METHODS)[number];

/** How many leading path segments pick a bucket: `/api/v1/kms`, `/api/v4/secrets`, `/api/status`. */
const SEGMENTS = 3;

/**
 * The bucket of a path: its first segments, lower-cased because Express matches routes without
 * regard to case, empty segments skipped because a trailing slash still matches. Every route's
 * leading segments are literal (checked at registration), so a route that matches a path always
 * sits in that path's bucket.
 */
const bucketOf = (path: string) => {
  const segments: string[] = [];
  let start = 1;
  while (segments.length < SEGMENTS && start <= path.length) {
    let end = path.indexOf("/", start);
    if (end === -1) end = path.length;
    if (end > start) segments.push(path.slice(start, end).toLowerCase());
    start = end + 1;
  }
  return segments.join("/");
};

/**
 * Routes grouped by their leading path segments, each group an Express router of its own, behind
 * one middleware that picks the group of a request's path. Express otherwise tries every route of
 * the API in turn (well over 200 path patterns) before it reaches one registered late; this way a
 * request is matched against its group only. Order within a group is registration order, as before.
 * `routes` takes the registrations (ts-rest's `createExpressEndpoints` writes to it as to an app);
 * anything else it is asked to `use` goes to `app`, after the dispatcher.
 */
export const bucketedRoutes = (app: express.Express): { routes: IRouter; dispatch: RequestHandler } => {
  const buckets = new Map<string, express.Router>();
  const register =
    (method: Method) =>
    (path: string, ...handlers: RequestHandler[]) => {
      if (
        typeof path !== "string" ||
        path
          .split("/")
          .slice(0, SEGMENTS + 1)
          .some((s) => /[:*?(]/.test(s))
      )
        throw new Error(`route ${String(path)} needs literal leading segments to be bucketed`);
      const key = bucketOf(path);
      let bucket = buckets.get(key);
      if (!bucket) {
        bucket = express.Router();
        buckets.set(key, bucket);
      }
      bucket[method](path, ...handlers);
    };
  const routes = Object.fromEntries(METHODS.map((method) => [method, register(method)]));
  const dispatch: RequestHandler = (req, res, next) => {
    const bucket = buckets.get(bucketOf(req.path));
    if (bucket) bucket(req, res, next);
    else next();
  };
  return {
    // ts-rest only registers routes by method and adds an error handler with `use`.
    routes: { ...routes, use: (...args: unknown[]) => app.use(...(args as [RequestHandler])) } as unknown as IRouter,
    dispatch,
  };
};
