import { hash, randomBytes, scrypt as scryptCb, timingSafeEqual } from "node:crypto";
import { promisify } from "node:util";

const scrypt = promisify(scryptCb) as (password: string, salt: Buffer, keylen: number) => Promise<Buffer>;

/** Opaque bearer secret: 256 random bits, prefixed so leaked tokens are recognisable in scans. */
export const generateToken = (prefix = "kw") => `${prefix}_${randomBytes(32).toString("base64url")}`;

/** Tokens are looked up by hash only; the plaintext is never stored. (One-shot `hash`: no Hash object per request.) */
export const hashToken = (token: string) => hash("sha256", token, "buffer");

/** The same hash as text, for in-memory keys: `Buffer.from(text, "base64")` is `hashToken`'s value. */
export const tokenHashText = (token: string) => hash("sha256", token, "base64");

/** Passwords (bootstrap admin) use scrypt with a per-password salt. */
export const hashPassword = async (password: string) => {
  const salt = randomBytes(16);
  const key = await scrypt(password, salt, 32);
  return `scrypt$${salt.toString("base64")}$${key.toString("base64")}`;
};

export const verifyPassword = async (password: string, stored: string) => {
  const [scheme, salt, key] = stored.split("$");
  if (scheme !== "scrypt" || !salt || !key) return false;
  const expected = Buffer.from(key, "base64");
  const actual = await scrypt(password, Buffer.from(salt, "base64"), expected.length);
  return timingSafeEqual(expected, actual);
};

/** Compare two secrets without leaking where they differ. */
export const safeEqual = (a: string, b: string) => {
  const ha = hash("sha256", a, "buffer");
  const hb = hash("sha256", b, "buffer");
  return timingSafeEqual(ha, hb);
};
