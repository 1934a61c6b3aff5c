import { createHmac, timingSafeEqual } from "node:crypto";
import { isUuid } from "../../db/errors";
import { BadRequestError } from "../../errors";

/**
 * A page boundary of the audit log: the creation time (UTC, to the microsecond, as stored) and id of
 * the last event of a page. The list is ordered by (created_at, id) descending, so the next page is
 * every event strictly before this pair: no event is skipped or repeated, even among events created
 * in the same microsecond, and events written meanwhile (newer) do not shift the pages.
 */
export type AuditCursor = { createdAt: string; id: string };

/** The label the cursor key is derived from the root key under; no other key uses it. */
export const AUDIT_CURSOR_KEY_PURPOSE = "audit-log-cursor";

const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
/** Bytes of the HMAC-SHA256 a cursor carries: 128 bits, so a guessed tag is accepted once in 2^128. */
const TAG_BYTES = 16;

const invalidCursor = () => new BadRequestError("Invalid cursor: pass the nextCursor of a previous page unchanged");

/** The tag of a cursor's text for one organization: a cursor is good only in the organization it was issued to. */
const tagOf = (key: Buffer, orgId: string, text: Buffer) =>
  createHmac("sha256", key).update(orgId).update("\n").update(text).digest().subarray(0, TAG_BYTES);

/**
 * Opaque to callers: base64url of `<instant> <id>` followed by its tag (HMAC-SHA256 under a key derived
 * from the root key, bound to the organization), so only a cursor this server issued is accepted.
 */
export const encodeAuditCursor = (key: Buffer, orgId: string, cursor: AuditCursor) => {
  const text = Buffer.from(`${cursor.createdAt} ${cursor.id}`, "utf8");
  return Buffer.concat([text, tagOf(key, orgId, text)]).toString("base64url");
};

/** The position a cursor names; 400 for anything this server did not issue to this organization, altered or not. */
export const decodeAuditCursor = (key: Buffer, orgId: string, encoded: string): AuditCursor => {
  const raw = /^[A-Za-z0-9_-]+$/.test(encoded) ? Buffer.from(encoded, "base64url") : Buffer.alloc(0);
  if (raw.length <= TAG_BYTES) throw invalidCursor();
  const text = raw.subarray(0, raw.length - TAG_BYTES);
  if (!timingSafeEqual(raw.subarray(raw.length - TAG_BYTES), tagOf(key, orgId, text))) throw invalidCursor();
  const [createdAt = "", id = "", ...rest] = text.toString("utf8").split(" ");
  if (rest.length > 0 || !INSTANT.test(createdAt) || Number.isNaN(Date.parse(createdAt)) || !isUuid(id)) {
    throw invalidCursor();
  }
  return { createdAt, id };
};
