import type { AuditLog, AuditLogVerification, ListAuditLogsQuery } from "@keyward/contract";
import { BadRequestError } from "../../errors";
import { toIso } from "../../lib/dates";
import { inTransaction } from "../../db/transaction";
import { assertCan } from "../authz/guard";
import { orgAbilityOf } from "../authz/org-access";
import { getProjectPermission } from "../authz/project-access";
import type { Database } from "../../db/database";
import {
  allChainBounds,
  countAuditEvents,
  chainEventsBetween,
  chainHead,
  chainStretchesInRange,
  eventExists,
  listAuditLogs,
  predecessorHash,
  setProjectRetentionDays,
} from "./audit.repository";
import type { AuditLogRow } from "./audit.repository";
import { eventHash, toChained } from "./audit-chain";
import { decodeAuditCursor, encodeAuditCursor } from "./audit-cursor";
import { routeEventTypes } from "./audit-events";
import { noteAudit, type RequestContext } from "../../context";

/** Actor types whose metadata names an id, so `actor` can filter them. */
const ACTOR_ID_KEYS: Record<string, string> = {
  user: "userId",
  identity: "identityId",
  kmipClient: "clientId",
  service: "serviceId",
  acmeProfile: "profileId",
  estAccount: "profileId",
  scepAccount: "profileId",
  acmeAccount: "accountId",
  scimClient: "scimTokenId",
};

/** `audit-logs: read` in the project when one is named, else in the organization. */
const authorizeRead = async (ctx: RequestContext, projectId: string | undefined) => {
  if (projectId) {
    const { ability } = await getProjectPermission(ctx, projectId);
    assertCan(ability, "read", "audit-logs");
  } else {
    assertCan(orgAbilityOf(ctx.actor), "read", "audit-logs");
  }
};

/** The default window: from last midnight (UTC) to now. */
const dateRange = (ctx: RequestContext, startDate?: string, endDate?: string) => {
  const now = ctx.deps.clock.now();
  const midnight = new Date(now);
  midnight.setUTCHours(0, 0, 0, 0);
  return {
    startDate: startDate ? new Date(startDate) : midnight,
    endDate: endDate ? new Date(endDate) : new Date(now),
  };
};

export const toAuditLogDto = (row: AuditLogRow): AuditLog => {
  const createdAt = toIso(row.created_at);
  return {
    id: row.id,
    orgId: row.org_id,
    projectId: row.project_id,
    projectName: row.project_name,
    actor: { type: row.actor_type, metadata: row.actor_metadata as Record<string, unknown> },
    event: { type: row.event_type, metadata: row.event_metadata as Record<string, unknown> },
    ipAddress: row.ip_address,
    userAgent: row.user_agent,
    userAgentType: row.user_agent_type,
    createdAt,
    updatedAt: createdAt,
    expiresAt: toIso(row.expires_at),
  };
};

export const listOrganizationAuditLogs = async (ctx: RequestContext, query: ListAuditLogsQuery) => {
  await authorizeRead(ctx, query.projectId);
  if (query.actor && query.actorType && !ACTOR_ID_KEYS[query.actorType]) {
    throw new BadRequestError(`Actor type '${query.actorType}' does not support filtering by actor ID`);
  }
  if (query.cursor && query.offset > 0) throw new BadRequestError("Page with either offset or cursor, not both");
  const cursorKey = ctx.deps.auditCursorKey;
  const cursor = query.cursor ? decodeAuditCursor(cursorKey, ctx.actor.orgId, query.cursor) : undefined;
  const rows = await listAuditLogs(ctx.deps.db, {
    orgId: ctx.actor.orgId,
    projectId: query.projectId,
    actorType: query.actorType,
    actorId: query.actor,
    eventTypes: query.eventType,
    userAgentType: query.userAgentType,
    environment: query.environment,
    secretPath: query.secretPath,
    secretKey: query.secretKey,
    metadata: query.eventMetadata,
    ...dateRange(ctx, query.startDate, query.endDate),
    offset: query.offset,
    limit: query.limit,
    cursor,
  });
  const last = rows.length === query.limit ? rows[rows.length - 1] : undefined;
  return {
    auditLogs: rows.map(toAuditLogDto),
    nextCursor: last ? encodeAuditCursor(cursorKey, ctx.actor.orgId, { createdAt: last.cursor_at, id: last.id }) : null,
  };
};

/** Verification reads in pages of this many events: memory stays bounded whatever the range. */
const VERIFY_PAGE = 5_000;

type Checked = { seq: bigint; hash: string; id: string };
type Verdict = Omit<AuditLogVerification, "checked" | "valid">;

/** The newest event checked in a chain must be the head, or be followed by the event after it. */
const endOfStretch = async (db: Database, chainId: string, last: Checked): Promise<Verdict | undefined> => {
  const head = await chainHead(db, chainId);
  const broken = { firstInvalidEventId: last.id, reason: "link-broken" as const };
  if (!head) return broken;
  const headSeq = BigInt(head.seq);
  if (headSeq === last.seq) return head.hash === last.hash ? undefined : broken;
  if (headSeq < last.seq) return broken;
  return (await eventExists(db, chainId, last.seq + 1n))
    ? undefined
    : { firstInvalidEventId: last.id, reason: "events-missing" };
};

/**
 * Verify one chain from sequence number `first` through `last`, anchored on the stored hash of the
 * event before `first` (or the chain's prune anchor): the cost is that of the stretch alone.
 */
const verifyStretch = async (
  db: Database,
  stretch: { chainId: string; first: string; last: string },
  counted: { checked: number },
): Promise<Verdict | undefined> => {
  let previous: Checked | undefined;
  let from = stretch.first;
  for (;;) {
    const rows = await chainEventsBetween(db, stretch.chainId, from, stretch.last, VERIFY_PAGE);
    for (const row of rows) {
      const seq = BigInt(row.seq);
      const expectedPrev = previous
        ? previous.seq + 1n === seq
          ? previous.hash
          : undefined
        : await predecessorHash(db, stretch.chainId, String(row.seq));
      if (expectedPrev === undefined) return { firstInvalidEventId: row.id, reason: "events-missing" };
      if (row.prev_hash !== expectedPrev) return { firstInvalidEventId: row.id, reason: "link-broken" };
      if (eventHash(toChained(row)) !== row.hash) return { firstInvalidEventId: row.id, reason: "content-changed" };
      counted.checked += 1;
      previous = { seq, hash: row.hash, id: row.id };
    }
    if (rows.length < VERIFY_PAGE || !previous) break;
    from = (previous.seq + 1n).toString();
  }
  return previous ? endOfStretch(db, stretch.chainId, previous) : undefined;
};

/** GET /api/v1/organization/audit-logs/event-types: for whoever may read the organization's audit log. */
export const listAuditEventTypes = async (ctx: RequestContext) => {
  await authorizeRead(ctx, undefined);
  return { eventTypes: routeEventTypes() };
};

/**
 * Walk every chain of the organization (or project) with events in the range, from its first event
 * there to its last: each event's hash must match its content and its predecessor's hash, sequence
 * numbers must not skip, and a chain whose newest event is in range must end where its head says.
 */
export const verifyAuditLogs = async (
  ctx: RequestContext,
  query: { projectId?: string; startDate?: string; endDate?: string },
): Promise<AuditLogVerification> => {
  await authorizeRead(ctx, query.projectId);
  const range = {
    orgId: ctx.actor.orgId,
    projectId: query.projectId,
    ...dateRange(ctx, query.startDate, query.endDate),
  };
  if (!query.startDate) range.startDate = new Date(0);
  const counted = { checked: 0 };
  for (const stretch of await chainStretchesInRange(ctx.deps.db, range)) {
    const verdict = await verifyStretch(
      ctx.deps.db,
      { chainId: stretch.chain_id, first: stretch.first_seq, last: stretch.last_seq },
      counted,
    );
    if (verdict) return { valid: false, checked: counted.checked, ...verdict };
  }
  return { valid: true, checked: counted.checked };
};

/**
 * Every chain of the instance whole, from its anchor to its head, and every event in some chain (a
 * restored instance is checked so before it is handed over). `db` may be a transaction's.
 */
export const verifyAllAuditChains = async (db: Database) => {
  const counted = { checked: 0 };
  let chains = 0;
  for (const chain of await allChainBounds(db)) {
    if (BigInt(chain.seq) <= BigInt(chain.pruned_seq)) continue;
    chains += 1;
    const stretch = { chainId: chain.chain_id, first: (BigInt(chain.pruned_seq) + 1n).toString(), last: chain.seq };
    const verdict = await verifyStretch(db, stretch, counted);
    if (verdict) return { valid: false, checked: counted.checked, chains, ...verdict };
  }
  const stored = await countAuditEvents(db);
  if (stored !== counted.checked)
    return { valid: false, checked: counted.checked, chains, reason: "events-outside-chains" };
  return { valid: true, checked: counted.checked, chains };
};

export const setProjectAuditRetention = async (ctx: RequestContext, projectId: string, days: number | null) => {
  const { ability, project } = await getProjectPermission(ctx, projectId);
  assertCan(ability, "edit", "settings");
  noteAudit(ctx, { metadata: { auditLogsRetentionDays: days } });
  await inTransaction(ctx, (trx) => setProjectRetentionDays(trx, project.id, days));
  return { projectId: project.id, auditLogsRetentionDays: days };
};
