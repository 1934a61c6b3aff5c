import type { TLSSocket } from "node:tls";
import express, { Router, type Request, type RequestHandler, type Response } from "express";
import type { AppDeps } from "../../../context";
import { x509 } from "../x509";
import {
  EstError,
  caCertificates,
  certsOnly,
  fromBootstrapChain,
  issuedByProfile,
  loadEstProfile,
  passphraseMatches,
  simpleEnroll,
  simpleReenroll,
  type EstAuthentication,
} from "./est.service";
import { auditOriginOf } from "../../audit/audit-protocol";

/** Mounted at this path, so other requests skip the router after one prefix check. */
export const EST_MOUNT = "/.well-known/est";
const PREFIX = "/:profileId";

/**
 * The client's certificate: from this connection when it is TLS, else from `x-ssl-client-cert`
 * (URL-encoded PEM, as nginx forwards it) only when the peer is a trusted proxy (TRUST_PROXY).
 */
const clientCertificate = (req: Request) => {
  try {
    const socket = req.socket as Partial<TLSSocket>;
    if (socket.encrypted && socket.getPeerCertificate) {
      const peer = socket.getPeerCertificate(false);
      if (peer?.raw) return new x509.X509Certificate(peer.raw);
      return undefined;
    }
    const header = req.get("x-ssl-client-cert");
    const trusted = req.app.get("trust proxy fn") as ((address: string, hop: number) => boolean) | undefined;
    if (header && trusted?.(req.socket.remoteAddress ?? "", 0)) {
      return new x509.X509Certificate(decodeURIComponent(header));
    }
  } catch {
    throw new EstError(400, "The client certificate cannot be read");
  }
  return undefined;
};

const sendCerts = (res: Response, body: string) => {
  res.setHeader("Content-Transfer-Encoding", "base64");
  res.status(200).type("application/pkcs7-mime; smime-type=certs-only").send(`${body}\n`);
};

/**
 * EST (RFC 7030) for profiles with EST enrollment: /cacerts, /simpleenroll, /simplereenroll.
 * Requests are base64 PKCS#10 (application/pkcs10); answers base64 PKCS#7 certs-only; errors plain text.
 */
export const estRouter = (deps: AppDeps): Router => {
  const router = Router();
  const pkcs10 = express.text({ type: "application/pkcs10", limit: "64kb" });

  const handle =
    (work: (req: Request, res: Response) => Promise<void>): RequestHandler =>
    (req, res) => {
      void work(req, res).catch((error: unknown) => {
        if (error instanceof EstError) {
          if (error.status === 401) res.setHeader("WWW-Authenticate", 'Basic realm="est"');
          res.status(error.status).type("text/plain").send(`${error.message}\n`);
          return;
        }
        deps.logger.error({ err: error }, "EST request failed");
        res.status(500).type("text/plain").send("Something went wrong\n");
      });
    };

  const readCsr = async (req: Request, res: Response) => {
    if (!req.is("application/pkcs10")) throw new EstError(415, "Content-Type must be application/pkcs10");
    await new Promise<void>((resolve, reject) =>
      pkcs10(req, res, (err?: unknown) => (err ? reject(new EstError(413, "The request is too large")) : resolve())),
    );
    if (typeof req.body !== "string" || req.body.trim() === "") throw new EstError(400, "The request has no CSR");
    return req.body;
  };

  router.get(
    `${PREFIX}/cacerts`,
    handle(async (req, res) => {
      const est = await loadEstProfile(deps, String(req.params.profileId));
      sendCerts(res, certsOnly(await caCertificates(deps, est)));
    }),
  );

  router.post(
    `${PREFIX}/simpleenroll`,
    handle(async (req, res) => {
      const est = await loadEstProfile(deps, String(req.params.profileId));
      const certificate = clientCertificate(req);
      const issued = certificate ? await issuedByProfile(deps, est, certificate) : undefined;
      let authentication: EstAuthentication = "issued-certificate";
      if (!issued) {
        if (!passphraseMatches(est, req.get("authorization"))) throw new EstError(401, "Authentication required");
        authentication = "passphrase";
        if (!est.disableBootstrapCaValidation) {
          if (!(certificate && (await fromBootstrapChain(est, certificate)))) {
            throw new EstError(401, "A client certificate signed by the profile's bootstrap CA chain is required");
          }
          authentication = "passphrase-and-bootstrap-certificate";
        }
      }
      const csr = await readCsr(req, res);
      const pem = await simpleEnroll(deps, est, csr, { origin: auditOriginOf(req), authentication });
      sendCerts(res, certsOnly([new x509.X509Certificate(pem)]));
    }),
  );

  router.post(
    `${PREFIX}/simplereenroll`,
    handle(async (req, res) => {
      const est = await loadEstProfile(deps, String(req.params.profileId));
      const certificate = clientCertificate(req);
      const current = certificate ? await issuedByProfile(deps, est, certificate) : undefined;
      if (!current) throw new EstError(401, "Re-enrollment needs a client certificate this profile issued");
      const pem = await simpleReenroll(deps, est, current, await readCsr(req, res), auditOriginOf(req));
      sendCerts(res, certsOnly([new x509.X509Certificate(pem)]));
    }),
  );
  return router;
};
