import { createHash } from "node:crypto";

/** The hash a chain starts from (and the anchor of a chain nothing was pruned from). */
export const GENESIS_HASH = "0".repeat(64);

/** Chain of events outside any project and organization (failed logins of unknown identities). */
export const UNSCOPED_CHAIN_ID = "00000000-0000-0000-0000-000000000000";

/** The fields of an event the hash covers: everything stored except the hash itself. */
export type ChainedContent = {
  id: string;
  orgId: string | null;
  projectId: string | null;
  projectName: string | null;
  chainId: string;
  seq: string;
  actorType: string;
  actorId: string | null;
  actorMetadata: unknown;
  eventType: string;
  eventMetadata: unknown;
  ipAddress: string | null;
  userAgent: string | null;
  userAgentType: string | null;
  createdAt: Date;
  expiresAt: Date | null;
  prevHash: string;
};

/**
 * JSON with object keys sorted at every level, so jsonb's own key order never changes a hash. Built
 * by concatenation (every audit event is hashed on its way in): keys in UTF-16 order, `undefined`
 * members left out, `undefined` in an array written as null, like JSON.stringify.
 */
export const canonicalJson = (value: unknown): string => {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) {
    let out = "[";
    for (let i = 0; i < value.length; i += 1) {
      if (i > 0) out += ",";
      // A hole (never in JSON-born data) stays empty, as the chain has always written it.
      if (i in value) out += canonicalJson(value[i]);
    }
    return `${out}]`;
  }
  const record = value as Record<string, unknown>;
  let out = "{";
  for (const key of Object.keys(record).sort()) {
    const member = record[key];
    if (member === undefined) continue;
    if (out.length > 1) out += ",";
    out += `${JSON.stringify(key)}:${canonicalJson(member)}`;
  }
  return `${out}}`;
};

/** SHA-256 over the previous hash and the canonical content: editing, removing or reordering shows. */
export const eventHash = (event: ChainedContent): string =>
  createHash("sha256")
    .update(event.prevHash)
    .update("\n")
    .update(
      canonicalJson([
        event.id,
        event.orgId,
        event.projectId,
        event.projectName,
        event.chainId,
        event.seq,
        event.actorType,
        event.actorId,
        event.actorMetadata,
        event.eventType,
        event.eventMetadata,
        event.ipAddress,
        event.userAgent,
        event.userAgentType,
        event.createdAt.toISOString(),
        event.expiresAt ? event.expiresAt.toISOString() : null,
      ]),
    )
    .digest("hex");
