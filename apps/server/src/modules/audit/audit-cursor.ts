import { isUuid } from "../../db/errors";
import { BadRequestError } from "../../errors";

/**
 * A page boundary of the audit log: the creation time (UTC, to the microsecond, as stored) and id of
 * the last event of a page. The list is ordered by (created_at, id) descending, so the next page is
 * every event strictly before this pair: no event is skipped or repeated, even among events created
 * in the same microsecond, and events written meanwhile (newer) do not shift the pages.
 */
export type AuditCursor = { createdAt: string; id: string };

const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

/** Opaque to callers: base64url of `<instant> <id>`. */
export const encodeAuditCursor = (cursor: AuditCursor) =>
  Buffer.from(`${cursor.createdAt} ${cursor.id}`, "utf8").toString("base64url");

export const decodeAuditCursor = (text: string): AuditCursor => {
  const decoded = /^[A-Za-z0-9_-]+$/.test(text) ? Buffer.from(text, "base64url").toString("utf8") : "";
  const [createdAt = "", id = "", ...rest] = decoded.split(" ");
  if (rest.length > 0 || !INSTANT.test(createdAt) || Number.isNaN(Date.parse(createdAt)) || !isUuid(id)) {
    throw new BadRequestError("Invalid cursor: pass the nextCursor of a previous page unchanged");
  }
  return { createdAt, id };
};
