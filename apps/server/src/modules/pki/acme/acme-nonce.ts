import { randomBytes } from "node:crypto";
import type { Database } from "../../../db/database";
import { deleteExpiredNonces, deleteLiveNonce, insertNonce } from "./acme.repository";

const NONCE_TTL_MS = 60 * 60 * 1000;

/**
 * A fresh Replay-Nonce, stored so any instance accepts it once. Issuing also drops a batch of
 * expired nonces, so the table never grows past what clients hold.
 */
export const issueNonce = async (db: Database, now = new Date()) => {
  const nonce = randomBytes(16).toString("base64url");
  await insertNonce(db, nonce, new Date(now.getTime() + NONCE_TTL_MS));
  await deleteExpiredNonces(db, now);
  return nonce;
};

/** Use a nonce up: true once, for an unexpired nonce this server issued. */
export const consumeNonce = async (db: Database, nonce: string, now = new Date()) =>
  (await deleteLiveNonce(db, nonce, now)) !== undefined;
