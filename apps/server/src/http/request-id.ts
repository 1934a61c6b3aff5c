import { randomBytes } from "node:crypto";
import type { RequestHandler } from "express";

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/** `req-` followed by 14 alphanumerics, echoed in `x-request-id`. */
export const newRequestId = () => {
  const bytes = randomBytes(14);
  let id = "req-";
  for (const byte of bytes) id += ALPHABET[byte % ALPHABET.length];
  return id;
};

export const requestId: RequestHandler = (_req, res, next) => {
  const id = newRequestId();
  res.locals.reqId = id;
  res.setHeader("x-request-id", id);
  next();
};
