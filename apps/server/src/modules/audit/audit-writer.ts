import { randomUUID } from "node:crypto";
import type { AuditActorType } from "@keyward/contract";
import type { Tx } from "../../db/transaction";
import type { AuditLogsTable } from "../../db/tables/audit";
import { eventHash, UNSCOPED_CHAIN_ID } from "./audit-chain";
import { appendToChain, lockChainHead } from "./audit-write.repository";
import { userAgentTypeOf } from "./user-agent";

/** One event as a module or the request scope describes it, before it is chained. */
export type AuditEventInput = {
  orgId: string | null;
  projectId: string | null;
  /** Known by the caller when the project is gone by commit time (its deletion). */
  projectName?: string | null;
  actor: { type: AuditActorType; id: string | null; metadata: Record<string, unknown> };
  type: string;
  metadata: Record<string, unknown>;
  ipAddress: string | null;
  userAgent: string | null;
  createdAt: Date;
};

const DAY_MS = 86_400_000;

/** A project's events live in its own chain, everything else in its organization's. */
export const chainOf = (event: Pick<AuditEventInput, "orgId" | "projectId">) =>
  event.projectId ?? event.orgId ?? UNSCOPED_CHAIN_ID;

/**
 * Metadata as it will read back from jsonb: no undefined, no Date objects, no functions, no NaN, and
 * no NUL characters (jsonb cannot hold them; an event must never make its change fail). A copy, not a
 * JSON round trip: every read event passes here.
 */
const plainValue = (item: unknown): unknown => {
  if (typeof item === "string") return item.includes("\0") ? item.replaceAll("\0", "") : item;
  if (typeof item === "number") return Number.isFinite(item) ? item : null;
  if (item === null || typeof item !== "object") return typeof item === "function" ? undefined : item;
  if (item instanceof Date) return item.toJSON();
  if (Array.isArray(item)) return item.map((entry) => plainValue(entry) ?? null);
  return plain(item as Record<string, unknown>);
};

const plain = (value: Record<string, unknown>): Record<string, unknown> => {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const item = plainValue(value[key]);
    if (item !== undefined) out[key.includes("\0") ? key.replaceAll("\0", "") : key] = item;
  }
  return out;
};

/**
 * Write events inside `trx`: per chain (in a fixed order, so two writers never wait on each other
 * in a cycle) lock the head, link and hash the events, insert them with their stream deliveries.
 */
export const writeAuditEvents = async (trx: Tx, defaultRetentionDays: number, events: AuditEventInput[]) => {
  const byChain = new Map<string, AuditEventInput[]>();
  for (const event of events) {
    const chainId = chainOf(event);
    const list = byChain.get(chainId);
    if (list) list.push(event);
    else byChain.set(chainId, [event]);
  }
  for (const chainId of [...byChain.keys()].sort()) {
    const chainEvents = byChain.get(chainId)!;
    const first = chainEvents[0]!;
    const head = await lockChainHead(trx, chainId, first.orgId, first.projectId);
    const retentionDays = Math.min(head.projectRetentionDays ?? defaultRetentionDays, defaultRetentionDays);
    let seq = BigInt(head.seq);
    let prevHash = head.hash;
    const rows: AuditLogsTable[] = chainEvents.map((event) => {
      seq += 1n;
      const row = {
        id: randomUUID(),
        org_id: event.orgId,
        project_id: event.projectId,
        project_name: event.projectName ?? head.projectName,
        chain_id: chainId,
        seq: seq.toString(),
        actor_type: event.actor.type,
        actor_id: event.actor.id,
        actor_metadata: plain(event.actor.metadata),
        event_type: event.type,
        event_metadata: plain(event.metadata),
        ip_address: event.ipAddress,
        user_agent: event.userAgent,
        user_agent_type: userAgentTypeOf(event.userAgent),
        created_at: event.createdAt,
        expires_at: new Date(event.createdAt.getTime() + retentionDays * DAY_MS),
        prev_hash: prevHash,
        hash: "",
      };
      row.hash = eventHash(toChained(row));
      prevHash = row.hash;
      return row;
    });
    await appendToChain(trx, chainId, rows, { seq: seq.toString(), hash: prevHash });
  }
};

/** The hashed view of a stored row (shared by the writer and the verifier). */
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
