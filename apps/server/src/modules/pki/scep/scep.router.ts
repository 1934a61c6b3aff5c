import express, { Router, type Request, type RequestHandler, type Response } from "express";
import type { AppDeps } from "../../../context";
import { auditOriginOf } from "../../audit/audit-protocol";
import { ScepHttpError, caCertificates, capabilities, loadScepProfile, pkiOperation } from "./scep.service";

/** Mounted at this path, so other requests skip the router after one prefix check. */
export const SCEP_MOUNT = "/api/v1/cert-manager/scep";
const PATH = "/profiles/:profileId/pkiclient.exe";

/**
 * SCEP (RFC 8894) for profiles with SCEP enrollment: GetCACaps, GetCACert and PKIOperation (GET with
 * a base64 message, or POST with the DER body). Refusals of a readable request are signed FAILURE
 * replies (HTTP 200); a profile that does not use SCEP is 404, a malformed request 400, plain text.
 */
export const scepRouter = (deps: AppDeps): Router => {
  const router = Router();
  const binary = express.raw({ type: () => true, limit: "256kb" });

  const handle =
    (work: (req: Request, res: Response) => Promise<void>): RequestHandler =>
    (req, res) => {
      void work(req, res).catch((error: unknown) => {
        if (error instanceof ScepHttpError) {
          res.status(error.status).type("text/plain").send(`${error.message}\n`);
          return;
        }
        deps.logger.error({ err: error }, "SCEP request failed");
        res.status(500).type("text/plain").send("Something went wrong\n");
      });
    };

  const answer = async (req: Request, res: Response, message: Buffer) => {
    const scep = await loadScepProfile(deps, String(req.params.profileId));
    const result = await pkiOperation(deps, scep, message, auditOriginOf(req));
    if (result.reason) deps.logger.info({ profileId: scep.profile.id, reason: result.reason }, "SCEP request refused");
    res.status(200).type("application/x-pki-message").send(result.reply);
  };

  router.get(
    PATH,
    handle(async (req, res) => {
      const operation = typeof req.query.operation === "string" ? req.query.operation : "";
      if (operation === "PKIOperation") {
        const message = typeof req.query.message === "string" ? req.query.message : "";
        const der = Buffer.from(message.replace(/\s+/g, ""), "base64");
        if (der.length === 0) throw new ScepHttpError(400, "PKIOperation needs a base64 message");
        await answer(req, res, der);
        return;
      }
      const scep = await loadScepProfile(deps, String(req.params.profileId));
      if (operation === "GetCACaps") {
        res.status(200).type("text/plain").send(capabilities(scep));
      } else if (operation === "GetCACert") {
        res
          .status(200)
          .type("application/x-x509-ca-ra-cert")
          .send(await caCertificates(deps, scep));
      } else {
        throw new ScepHttpError(400, "operation must be GetCACaps, GetCACert or PKIOperation");
      }
    }),
  );

  router.post(
    PATH,
    handle(async (req, res) => {
      if (req.query.operation !== "PKIOperation") throw new ScepHttpError(400, "POST serves PKIOperation only");
      await new Promise<void>((resolve, reject) =>
        binary(req, res, (err?: unknown) =>
          err ? reject(new ScepHttpError(413, "The message is too large")) : resolve(),
        ),
      );
      const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      if (body.length === 0) throw new ScepHttpError(400, "PKIOperation needs a message");
      await answer(req, res, body);
    }),
  );
  return router;
};
