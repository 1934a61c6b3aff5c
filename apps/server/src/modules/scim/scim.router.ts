import express, { Router, type ErrorRequestHandler, type Request, type Response } from "express";
import type { AppDeps } from "../../context";
import { authenticateScim, type ScimContext } from "./scim-auth";
import { ScimError } from "./scim-protocol";
import {
  createScimGroup,
  deleteScimGroup,
  getScimGroup,
  listScimGroups,
  patchScimGroup,
  replaceScimGroup,
} from "./scim-groups.service";
import {
  createScimUser,
  deleteScimUser,
  getScimUser,
  listScimUsers,
  patchScimUser,
  replaceScimUser,
} from "./scim-users.service";

export const SCIM_MOUNT = "/api/v1/scim";

const SCIM_JSON = "application/scim+json";

/** SCIM bodies: `application/scim+json` or `application/json`, at most 256 KiB. */
const scimBodies = express.json({ limit: "256kb", type: [SCIM_JSON, "application/json"] });

type Handler = (ctx: ScimContext, req: Request) => Promise<unknown>;

const send = (res: Response, status: number, body: unknown) => {
  const json = JSON.stringify(body);
  res.status(status).setHeader("Content-Type", `${SCIM_JSON}; charset=utf-8`);
  res.setHeader("Content-Length", Buffer.byteLength(json));
  res.end(json);
};

/**
 * SCIM 2.0 for an organization's identity provider, outside the JSON contract: authenticated only by
 * the organization's SCIM token, answered 200 (POST and DELETE too, as the IdP connectors configured
 * for Infisical expect) or with SCIM's error body. Users are known by their org membership id.
 */
export const scimRoutes = (deps: AppDeps) => {
  const router = Router();
  const route =
    (handler: Handler): express.RequestHandler =>
    (req, res, next) => {
      void (async () => send(res, 200, await handler(await authenticateScim(deps, req), req)))().catch(next);
    };
  const id = (req: Request) => req.params.id ?? "";
  const query = (req: Request) => req.query as Record<string, unknown>;

  router.use(["/Users", "/Groups"], scimBodies);
  router.get(
    "/Users",
    route((ctx, req) => listScimUsers(ctx, query(req))),
  );
  router.post(
    "/Users",
    route((ctx, req) => createScimUser(ctx, req.body)),
  );
  router.get(
    "/Users/:id",
    route((ctx, req) => getScimUser(ctx, id(req))),
  );
  router.put(
    "/Users/:id",
    route((ctx, req) => replaceScimUser(ctx, id(req), req.body)),
  );
  router.patch(
    "/Users/:id",
    route((ctx, req) => patchScimUser(ctx, id(req), req.body)),
  );
  router.delete(
    "/Users/:id",
    route((ctx, req) => deleteScimUser(ctx, id(req))),
  );
  router.get(
    "/Groups",
    route((ctx, req) => listScimGroups(ctx, query(req))),
  );
  router.post(
    "/Groups",
    route((ctx, req) => createScimGroup(ctx, req.body)),
  );
  router.get(
    "/Groups/:id",
    route((ctx, req) => getScimGroup(ctx, id(req))),
  );
  router.put(
    "/Groups/:id",
    route((ctx, req) => replaceScimGroup(ctx, id(req), req.body)),
  );
  router.patch(
    "/Groups/:id",
    route((ctx, req) => patchScimGroup(ctx, id(req), req.body)),
  );
  router.delete(
    "/Groups/:id",
    route((ctx, req) => deleteScimGroup(ctx, id(req))),
  );

  const scimErrors: ErrorRequestHandler = (error: unknown, req, res, next) => {
    if (error instanceof ScimError) return send(res, error.status, error.body);
    const parser = error as { type?: string; status?: number };
    if (parser.type === "entity.too.large")
      return send(res, 413, new ScimError(413, "The request body is too large").body);
    if (typeof parser.type === "string" && parser.status === 400) {
      return send(res, 400, new ScimError(400, "The request body is not valid JSON", "invalidSyntax").body);
    }
    next(error);
  };
  router.use(["/Users", "/Groups"], scimErrors);
  return router;
};
