import express, { Router, type Request, type RequestHandler, type Response } from "express";
import type { AppDeps } from "../../../context";
import { isUuid } from "../../../db/errors";
import { AppError } from "../../../errors";
import { auditOriginOf } from "../../audit/audit-protocol";
import { acmeDirectoryPath } from "../profile-config";
import { findConfigSecret, findProfileById } from "../profile.repository";
import { keyChange, newAccount, postAccount, type AcmeReply } from "./acme-account.service";
import { postChallenge } from "./acme-challenge.service";
import type { AcmeContext } from "./acme-jws";
import { issueNonce } from "./acme-nonce";
import { AcmeProblem, malformed, notFound } from "./acme-problem";
import { revokeCert } from "./acme-revoke.service";
import { downloadCertificate, finalizeOrder, getAuthz, getOrder, listOrders, newOrder } from "./acme-order.service";

/** Mounted at this path, so other requests skip the router after one prefix check. */
export const ACME_MOUNT = "/api/v1/cert-manager/acme";
const PREFIX = "/profiles/:profileId";

/**
 * ACME v2 (RFC 8555) for profiles with ACME enrollment. Not a JSON API of the contract: bodies are
 * JWS in application/jose+json, errors are application/problem+json, and every answer carries a
 * fresh Replay-Nonce. Mounted before the JSON body parser.
 */
export const acmeRouter = (deps: AppDeps): Router => {
  const router = Router();
  const jose = express.json({ type: "application/jose+json", limit: "256kb" });

  const publicBase = (req: Request) => deps.env.PUBLIC_URL ?? `${req.protocol}://${req.get("host") ?? "localhost"}`;

  const contextOf = async (req: Request): Promise<AcmeContext> => {
    const profileId = String(req.params.profileId);
    const found = isUuid(profileId) ? await findProfileById(deps.db, profileId) : undefined;
    if (!found || found.enrollment_type !== "acme") throw notFound("ACME profile");
    const { org_id: orgId, ...profile } = found;
    const settings = (await findConfigSecret(deps.db, profile.id, "acme"))?.settings ?? {};
    const root = publicBase(req);
    return {
      deps,
      profile,
      settings: {
        skipEabBinding: Boolean(settings.skipEabBinding),
        skipDnsOwnershipVerification: Boolean(settings.skipDnsOwnershipVerification),
      },
      base: `${root}${acmeDirectoryPath(profile.id).replace(/\/directory$/, "")}`,
      url: `${root}${req.originalUrl}`,
      orgId,
      origin: auditOriginOf(req),
    };
  };

  const sendProblem = async (res: Response, problem: AcmeProblem) => {
    res.setHeader("Replay-Nonce", await issueNonce(deps.db));
    res.status(problem.status).type("application/problem+json").send(JSON.stringify(problem.toJSON()));
  };

  const fail = async (res: Response, error: unknown) => {
    if (error instanceof AcmeProblem) return sendProblem(res, error);
    if (error instanceof AppError && error.statusCode < 500) return sendProblem(res, malformed(error.message));
    deps.logger.error({ err: error }, "ACME request failed");
    return sendProblem(res, new AcmeProblem("serverInternal", "Something went wrong", 500));
  };

  /** A POST endpoint: JWS body parsed here (jose+json only), the handler's reply sent with a new nonce. */
  const post =
    (handler: (ctx: AcmeContext, req: Request) => Promise<AcmeReply>): RequestHandler =>
    (req, res) => {
      void (async () => {
        try {
          if (!req.is("application/jose+json")) throw malformed("Content-Type must be application/jose+json", 415);
          await new Promise<void>((resolve, reject) =>
            jose(req, res, (err?: unknown) => (err ? reject(malformed("The body is not valid JSON")) : resolve())),
          );
          const ctx = await contextOf(req);
          const reply = await handler(ctx, req);
          res.setHeader("Replay-Nonce", await issueNonce(deps.db));
          res.setHeader("Cache-Control", "no-store");
          const links = [`<${ctx.base}/directory>;rel="index"`, ...(reply.links ?? [])];
          res.setHeader("Link", links);
          if (reply.location) res.setHeader("Location", reply.location);
          res.status(reply.status);
          if (typeof reply.body === "string") res.type(reply.contentType ?? "text/plain").send(reply.body);
          else res.type(reply.contentType ?? "application/json").send(JSON.stringify(reply.body));
        } catch (error) {
          await fail(res, error);
        }
      })();
    };

  router.get(`${PREFIX}/directory`, (req, res) => {
    void (async () => {
      try {
        const ctx = await contextOf(req);
        res.json({
          newNonce: `${ctx.base}/new-nonce`,
          newAccount: `${ctx.base}/new-account`,
          newOrder: `${ctx.base}/new-order`,
          revokeCert: `${ctx.base}/revoke-cert`,
          keyChange: `${ctx.base}/key-change`,
          meta: { externalAccountRequired: !ctx.settings.skipEabBinding },
        });
      } catch (error) {
        await fail(res, error);
      }
    })();
  });

  const nonce =
    (status: number): RequestHandler =>
    (req, res) => {
      void (async () => {
        try {
          const ctx = await contextOf(req);
          res.setHeader("Replay-Nonce", await issueNonce(deps.db));
          res.setHeader("Cache-Control", "no-store");
          res.setHeader("Link", `<${ctx.base}/directory>;rel="index"`);
          res.status(status).end();
        } catch (error) {
          await fail(res, error);
        }
      })();
    };
  router.head(`${PREFIX}/new-nonce`, nonce(200));
  router.get(`${PREFIX}/new-nonce`, nonce(204));

  router.post(
    `${PREFIX}/new-account`,
    post((ctx, req) => newAccount(ctx, req.body)),
  );
  router.post(
    `${PREFIX}/accounts/:accountId`,
    post((ctx, req) => postAccount(ctx, String(req.params.accountId), req.body)),
  );
  router.post(
    `${PREFIX}/accounts/:accountId/orders`,
    post((ctx, req) => listOrders(ctx, String(req.params.accountId), req.body)),
  );
  router.post(
    `${PREFIX}/key-change`,
    post((ctx, req) => keyChange(ctx, req.body)),
  );
  router.post(
    `${PREFIX}/new-order`,
    post((ctx, req) => newOrder(ctx, req.body)),
  );
  router.post(
    `${PREFIX}/orders/:orderId`,
    post((ctx, req) => getOrder(ctx, String(req.params.orderId), req.body)),
  );
  router.post(
    `${PREFIX}/orders/:orderId/finalize`,
    post((ctx, req) => finalizeOrder(ctx, String(req.params.orderId), req.body)),
  );
  router.post(
    `${PREFIX}/orders/:orderId/certificate`,
    post((ctx, req) => downloadCertificate(ctx, String(req.params.orderId), req.body)),
  );
  router.post(
    `${PREFIX}/authz/:authzId`,
    post((ctx, req) => getAuthz(ctx, String(req.params.authzId), req.body)),
  );
  router.post(
    `${PREFIX}/challenges/:challengeId`,
    post((ctx, req) => postChallenge(ctx, String(req.params.challengeId), req.body)),
  );
  router.post(
    `${PREFIX}/revoke-cert`,
    post((ctx, req) => revokeCert(ctx, req.body)),
  );
  return router;
};
