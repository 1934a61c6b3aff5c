import type { AuditLog, AuditLogVerification, ListAuditLogsQuery } from "@keyward/contract";
import { BadRequestError } from "../../errors";
import { toIso } from "../../lib/dates";
import { inTransaction } from "../../db/transaction";
import { assertCan } from "../authz/guard";
import { orgAbilityOf } from "../authz/org-access";
import { getProjectPermission } from "../authz/project-access";
import {
  chainEventsInRange,
  chainHead,
  eventExists,
  listAuditLogs,
  predecessorHash,
  setProjectRetentionDays,
} from "./audit.repository";
import type { AuditLogRow } from "./audit.repository";
import { eventHash, toChained } from "./audit-chain";
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
  });
  return { auditLogs: rows.map(toAuditLogDto) };
};

/** Verification reads in pages of this many events. */
const VERIFY_PAGE = 5_000;

/**
 * Walk every chain of the organization (or project) with events in the range: each event's hash
 * must match its content and its predecessor's hash, sequence numbers must not skip, and a chain
 * whose newest event is in range must end where its head says it does.
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
  let checked = 0;
  let previous: { chainId: string; seq: bigint; hash: string } | undefined;
  // The newest event checked in a chain must be the head, or be followed by the event after it.
  const endOfChain = async (chain: { chainId: string; seq: bigint; hash: string; id: string }) => {
    const head = await chainHead(ctx.deps.db, chain.chainId);
    if (!head) return "link-broken" as const;
    const headSeq = BigInt(head.seq);
    if (headSeq === chain.seq) return head.hash === chain.hash ? undefined : ("link-broken" as const);
    if (headSeq < chain.seq) return "link-broken" as const;
    return (await eventExists(ctx.deps.db, chain.chainId, chain.seq + 1n)) ? undefined : ("events-missing" as const);
  };
  let last: { chainId: string; seq: bigint; hash: string; id: string } | undefined;
  for (;;) {
    const rows = await chainEventsInRange(
      ctx.deps.db,
      { ...range, afterChain: last?.chainId, afterSeq: last?.seq.toString() },
      VERIFY_PAGE,
    );
    for (const row of rows) {
      const seq = BigInt(row.seq);
      const continues = previous && previous.chainId === row.chain_id;
      if (!continues && last) {
        const reason = await endOfChain(last);
        if (reason) return { valid: false, checked, firstInvalidEventId: last.id, reason };
      }
      const expectedPrev = continues
        ? previous!.seq + 1n === seq
          ? previous!.hash
          : undefined
        : await predecessorHash(ctx.deps.db, row.chain_id, row.seq);
      if (expectedPrev === undefined)
        return { valid: false, checked, firstInvalidEventId: row.id, reason: "events-missing" };
      if (row.prev_hash !== expectedPrev)
        return { valid: false, checked, firstInvalidEventId: row.id, reason: "link-broken" };
      if (eventHash(toChained(row)) !== row.hash) {
        return { valid: false, checked, firstInvalidEventId: row.id, reason: "content-changed" };
      }
      checked += 1;
      previous = { chainId: row.chain_id, seq, hash: row.hash };
      last = { ...previous, id: row.id };
    }
    if (rows.length < VERIFY_PAGE) break;
  }
  if (last) {
    const reason = await endOfChain(last);
    if (reason) return { valid: false, checked, firstInvalidEventId: last.id, reason };
  }
  return { valid: true, checked };
};

export const setProjectAuditRetention = async (ctx: RequestContext, projectId: string, days: number | null) => {
  const { ability, project } = await getProjectPermission(ctx, projectId);
  assertCan(ability, "edit", "settings");
  noteAudit(ctx, { metadata: { auditLogsRetentionDays: days } });
  await inTransaction(ctx, (trx) => setProjectRetentionDays(trx, project.id, days));
  return { projectId: project.id, auditLogsRetentionDays: days };
};
