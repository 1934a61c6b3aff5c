import { randomUUID } from "node:crypto";
import type { AuditActorType } from "@keyward/contract";
import type { Tx } from "../../db/transaction";
import { toWellFormedText } from "../../http/well-formed";
import { canonicalJson, hashChained, UNSCOPED_CHAIN_ID } from "./audit-chain";
import { appendToChain, lockChainHead } from "./audit-write.repository";
import { userAgentTypeOf } from "./user-agent";

/**
 * Who an event names. `text`, when given, is `actorType, actorId, actorMetadata` of the hashed array
 * already serialised (audit-scope.ts writes it once per caller's token); it must match the fields.
 */
export type AuditActor = {
  type: AuditActorType;
  id: string | null;
  metadata: Record<string, unknown>;
  text?: string;
};

/** One event as a module or the request scope describes it, before it is chained. */
export type AuditEventInput = {
  orgId: string | null;
  projectId: string | null;
  /** Known by the caller when the project is gone by commit time (its deletion). */
  projectName?: string | null;
  actor: AuditActor;
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
 * Text as jsonb can hold it: no NUL characters, and each lone surrogate (which JSON writes as an
 * escape jsonb refuses) replaced by U+FFFD. What is hashed is what is stored, so chains still verify.
 */
const storableText = (text: string) => toWellFormedText(text.includes("\0") ? text.replaceAll("\0", "") : text);

/**
 * Metadata as it will read back from jsonb: no undefined, no Date objects, no functions, no NaN, and
 * only storable text (an event must never make its change fail). A copy, not a JSON round trip:
 * every read event passes here.
 */
const plainValue = (item: unknown): unknown => {
  if (typeof item === "string") return storableText(item);
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
    if (item !== undefined) out[storableText(key)] = item;
  }
  return out;
};

/**
 * An event as it waits for its place in a chain: what the chain hash covers, except the fields only
 * the chain head decides (project name, sequence number, expiry), already written as the canonical
 * JSON `eventHash` reads. Read events wait up to a flush interval in this form: two strings instead
 * of an object tree per event for the garbage collector to carry, and no second serialisation at
 * flush time (the hashed text is what the database is sent).
 */
export type PreparedAuditEvent = {
  chainId: string;
  orgId: string | null;
  projectId: string | null;
  projectName: string | null | undefined;
  createdAt: number;
  /** `id, orgId, projectId` of the hashed array, comma-separated. */
  lead: string;
  /** `actorType` … `createdAt` of the hashed array, comma-separated. */
  body: string;
};

/** `actorType, actorId, actorMetadata` of the hashed array, comma-separated. */
export const actorText = (actor: AuditActor) =>
  actor.text ?? [actor.type, actor.id, plain(actor.metadata)].map(canonicalJson).join(",");

export const prepareAuditEvent = (event: AuditEventInput): PreparedAuditEvent => {
  const chainId = chainOf(event);
  const userAgent = typeof event.userAgent === "string" ? storableText(event.userAgent) : event.userAgent;
  const rest = [
    event.type,
    plain(event.metadata),
    typeof event.ipAddress === "string" ? storableText(event.ipAddress) : event.ipAddress,
    userAgent,
    userAgentTypeOf(userAgent),
    event.createdAt.toISOString(),
  ];
  return {
    chainId,
    orgId: event.orgId,
    projectId: event.projectId,
    projectName: event.projectName,
    createdAt: event.createdAt.getTime(),
    lead: [randomUUID(), event.orgId, event.projectId].map(canonicalJson).join(","),
    body: `${actorText(event.actor)},${rest.map(canonicalJson).join(",")}`,
  };
};

/**
 * The event without its metadata, for when the full one cannot be written: who did what, from where,
 * and a marker that the details were left out. An event is never dropped for its metadata.
 */
export const reducedAuditEvent = (event: AuditEventInput): AuditEventInput => ({
  ...event,
  metadata: { metadataReduced: true },
});

/**
 * Write events inside `trx`: per chain (in a fixed order, so two writers never wait on each other
 * in a cycle) lock the head, link and hash the events, insert them with their stream deliveries.
 */
export const writeAuditEvents = (trx: Tx, defaultRetentionDays: number, events: AuditEventInput[]) =>
  writePreparedAuditEvents(trx, defaultRetentionDays, events.map(prepareAuditEvent));

export const writePreparedAuditEvents = async (
  trx: Tx,
  defaultRetentionDays: number,
  events: readonly PreparedAuditEvent[],
) => {
  const byChain = new Map<string, PreparedAuditEvent[]>();
  for (const event of events) {
    const list = byChain.get(event.chainId);
    if (list) list.push(event);
    else byChain.set(event.chainId, [event]);
  }
  for (const chainId of [...byChain.keys()].sort()) {
    const chainEvents = byChain.get(chainId)!;
    const first = chainEvents[0]!;
    const head = await lockChainHead(trx, chainId, first.orgId, first.projectId);
    const retentionMs = Math.min(head.projectRetentionDays ?? defaultRetentionDays, defaultRetentionDays) * DAY_MS;
    let seq = BigInt(head.seq);
    let prevHash = head.hash;
    // Each element: [the hashed array, prev_hash, hash] (audit-write.repository.ts reads it by position).
    const elements = chainEvents.map((event) => {
      seq += 1n;
      const placed = [event.projectName ?? head.projectName, chainId, seq.toString()].map(canonicalJson).join(",");
      const expiresAt = canonicalJson(new Date(event.createdAt + retentionMs).toISOString());
      const hashed = `[${event.lead},${placed},${event.body},${expiresAt}]`;
      const hash = hashChained(prevHash, hashed);
      const element = `[${hashed},${canonicalJson(prevHash)},${canonicalJson(hash)}]`;
      prevHash = hash;
      return element;
    });
    await appendToChain(trx, chainId, `[${elements.join(",")}]`, { seq: seq.toString(), hash: prevHash });
  }
};
