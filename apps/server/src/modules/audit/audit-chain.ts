import { hash } from "node:crypto";
import type { AuditLogsTable } from "../../db/tables/audit";

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
export const hashChained = (prevHash: string, canonicalContent: string): string =>
  // One-shot: half the cost of a Hash object for an event's ~1 KB (every read event is hashed at flush).
  hash("sha256", `${prevHash}\n${canonicalContent}`, "hex");

/**
 * The hash of a stored event, recomputed from its fields by the verifier. The writer hashes the same
 * text without building this array: it joins the canonical JSON of each item (audit-writer.ts).
 */
export const eventHash = (event: ChainedContent): string =>
  hashChained(
    event.prevHash,
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
  );

/** The hashed view of a stored row, as the verifier reads it back. */
export const toChained = (row: Omit<AuditLogsTable, "hash">) => ({
  id: row.id,
  orgId: row.org_id,
  projectId: row.project_id,
  projectName: row.project_name,
  chainId: row.chain_id,
  seq: String(row.seq),
  actorType: row.actor_type,
  actorId: row.actor_id,
  actorMetadata: row.actor_metadata,
  eventType: row.event_type,
  eventMetadata: row.event_metadata,
  ipAddress: row.ip_address,
  userAgent: row.user_agent,
  userAgentType: row.user_agent_type,
  createdAt: new Date(row.created_at),
  expiresAt: row.expires_at ? new Date(row.expires_at) : null,
  prevHash: row.prev_hash,
});
