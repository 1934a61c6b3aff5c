import { randomBytes } from "node:crypto";

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/** Random bytes drawn in batches: one system call per 292 ids instead of one per request. */
const POOL_SIZE = 14 * 292;
let pool = randomBytes(POOL_SIZE);
let offset = 0;

/** `req-` followed by 14 alphanumerics, echoed in `x-request-id`. */
export const newRequestId = () => {
  if (offset + 14 > POOL_SIZE) {
    pool = randomBytes(POOL_SIZE);
    offset = 0;
  }
  let id = "req-";
  for (let i = 0; i < 14; i += 1) id += ALPHABET[pool[offset + i]! % ALPHABET.length];
  offset += 14;
  return id;
};
