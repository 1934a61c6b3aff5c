import type { Request } from "express";
import { ContractNoBody, type AppRoute } from "@ts-rest/core";
import { UnsupportedMediaTypeError } from "../errors";

const JSON_TYPE = "application/json";
const FORM_TYPE = "application/x-www-form-urlencoded";

/** The auth methods' login routes: the ones `login-forms.ts` also reads form bodies on. */
const LOGIN_ROUTE = /^\/api\/v1\/auth\/[^/:]+\/login$/;

/** Whether a request carries body bytes: a chunked body, or a Content-Length above 0. */
const hasBody = (req: Request) => {
  if (req.headers["transfer-encoding"] !== undefined) return true;
  const length = req.headers["content-length"];
  return length !== undefined && length !== "0" && Number(length) !== 0;
};

/**
 * For a contract route that takes a body, the check that the body is of a media type the app reads:
 * JSON everywhere, and form bodies on the login routes too (Infisical's clients send those). A body
 * of any other type (text/plain holding JSON, a form, no Content-Type at all) reached no parser and
 * would be validated as `{}`, a misleading 422 "Required"; it is a 415 naming the type to send. A
 * request without body bytes passes (the route's validation says what is missing), and so does every
 * request of a route without a body. Undefined for such routes, so they pay nothing.
 */
export const bodyMediaTypeCheck = (
  route: AppRoute,
): ((req: Request) => UnsupportedMediaTypeError | undefined) | undefined => {
  if (route.method === "GET" || !("body" in route) || route.body === ContractNoBody) return undefined;
  const types = route.method === "POST" && LOGIN_ROUTE.test(route.path) ? [JSON_TYPE, FORM_TYPE] : [JSON_TYPE];
  const expected = types.join(" or ");
  return (req) => {
    if (!hasBody(req) || req.is(types)) return undefined;
    const sent = req.headers["content-type"];
    return new UnsupportedMediaTypeError(
      `The request body must be ${expected} (sent: ${sent ? `Content-Type ${sent}` : "no Content-Type"})`,
    );
  };
};
