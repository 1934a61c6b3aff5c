import express, { type Request, type RequestHandler, type Response } from "express";
import type { AppDeps } from "../../../context";
import { MAX_REQUEST_BYTES } from "./ocsp-der";
import { answerOcspRequest, malformedOcspResponse } from "./ocsp.service";

export { OCSP_MOUNT } from "./ocsp-url";

/** POST `/<caId>/ocsp` (optionally with a trailing slash) and GET `/<caId>/ocsp/<url-encoded base64 request>`. */
const POST_PATH = /^\/([^/?]+)\/ocsp\/?(?:\?|$)/;
const GET_PATH = /^\/([^/?]+)\/ocsp\/([^?]+)/;
const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/;

/** Spends the responder's rate limit for a request; rejects (429) past it. */
export type OcspRateLimit = (req: Request) => Promise<void>;

const send = (res: Response, der: Buffer) => {
  // Every status is read from the database when asked, so no HTTP cache may answer in its place.
  res.setHeader("Cache-Control", "no-cache");
  res.status(200).type("application/ocsp-response").send(der);
};

/** The base64 request of a GET path, or undefined when it is not base64 (standard or URL-safe). */
const decodeGetRequest = (encoded: string) => {
  let text: string;
  try {
    text = decodeURIComponent(encoded);
  } catch {
    return undefined;
  }
  if (!BASE64.test(text) || text.length > Math.ceil((MAX_REQUEST_BYTES * 4) / 3) + 4) return undefined;
  return Buffer.from(text.replace(/-/g, "+").replace(/_/g, "/"), "base64");
};

/**
 * The OCSP responder of each CA (RFC 6960, with RFC 5019's GET form). Unauthenticated, like a CRL
 * distribution point: it tells only whether a serial the client already holds is revoked. Answers
 * are always HTTP 200 with an OCSPResponse, errors included, as OCSP clients expect; only a client
 * past its rate limit gets the API's 429, before its request is read. Mounted before the JSON body
 * parser; other requests under the prefix go on to the contract's CA routes (not counted here).
 */
export const ocspRouter = (deps: AppDeps, rateLimit: OcspRateLimit): RequestHandler => {
  const body = express.raw({ type: () => true, limit: MAX_REQUEST_BYTES });

  const answer = (res: Response, caId: string, der: Uint8Array | undefined, next: (error: unknown) => void) => {
    if (!der || der.length === 0) return send(res, malformedOcspResponse());
    answerOcspRequest(deps, caId, der).then((out) => send(res, out), next);
  };

  return (req, res, next) => {
    if (req.method === "POST") {
      const match = POST_PATH.exec(req.url);
      if (!match) return next();
      rateLimit(req).then(
        () =>
          body(req, res, (error?: unknown) => {
            if (error) return send(res, malformedOcspResponse());
            answer(res, match[1]!, Buffer.isBuffer(req.body) ? req.body : undefined, next);
          }),
        next,
      );
      return;
    }
    if (req.method === "GET") {
      const match = GET_PATH.exec(req.url);
      if (!match) return next();
      rateLimit(req).then(() => answer(res, match[1]!, decodeGetRequest(match[2]!), next), next);
      return;
    }
    next();
  };
};
