import { createHmac } from "node:crypto";
import type { AppDeps, AppJob } from "../../../context";
import { inTransaction } from "../../../db/transaction";
import { loop } from "../../../lib/loop";
import { toIso } from "../../../lib/dates";
import { requestPinned, resolveOutboundTarget } from "../../../lib/outbound";
import {
  claimDueStream,
  deleteDelivered,
  extendClaim,
  findStreamSecrets,
  markFailed,
  markHealthy,
  pendingDeliveries,
  releaseClaim,
} from "./streams.repository";

const BATCH = 100;
/** Batches one claim may send before letting other streams (and processes) have a turn. */
const BATCHES_PER_CLAIM = 20;

/** A claim outlives one delivery attempt; it is renewed before each batch. */
const claimMsOf = (deps: AppDeps) => deps.env.AUDIT_STREAM_TIMEOUT_MS + 5_000;

export type StreamHeader = { key: string; value: string };

/** `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`: receivers check it and reject stale times. */
export const signDelivery = (secret: string, body: string, unixSeconds: number) =>
  `t=${unixSeconds},v1=${createHmac("sha256", secret).update(`${unixSeconds}.${body}`).digest("hex")}`;

/** POST one body to a stream's receiver through the outbound guard; anything but 2xx is an error. */
export const postToReceiver = async (
  deps: AppDeps,
  url: string,
  headers: StreamHeader[],
  body: string,
  extra: Record<string, string> = {},
) => {
  const target = await resolveOutboundTarget(url, {
    schemes: ["https:", "http:"],
    policy: deps.env.ALLOW_PRIVATE_OUTBOUND,
  });
  const response = await requestPinned(target, {
    method: "POST",
    headers: {
      ...Object.fromEntries(headers.map((h) => [h.key, h.value])),
      ...extra,
      "content-type": "application/json",
      "content-length": String(Buffer.byteLength(body)),
    },
    body,
    caCert: deps.outboundCa,
    timeoutMs: deps.env.AUDIT_STREAM_TIMEOUT_MS,
    maxBytes: 65_536,
  });
  if (response.status < 200 || response.status > 299) {
    throw new Error(`Request failed with status code ${response.status}`);
  }
};

type Delivery = Awaited<ReturnType<typeof pendingDeliveries>>[number];

/** The delivered form: the listing's shape plus the chain fields, so receivers can check the chain too. */
const deliveredEvent = (row: Delivery) => ({
  id: row.eventId,
  orgId: row.org_id,
  projectId: row.project_id,
  projectName: row.project_name,
  actor: { type: row.actor_type, metadata: row.actor_metadata },
  event: { type: row.event_type, metadata: row.event_metadata },
  ipAddress: row.ip_address,
  userAgent: row.user_agent,
  userAgentType: row.user_agent_type,
  createdAt: row.created_at ? toIso(row.created_at) : null,
  expiresAt: row.expires_at ? toIso(row.expires_at) : null,
  chainId: row.chain_id,
  seq: row.seq === null ? null : String(row.seq),
  prevHash: row.prev_hash,
  hash: row.hash,
});

/** Deliver what one claimed stream has pending, batch by batch, in queue order. */
const deliverStream = async (deps: AppDeps, streamId: string) => {
  const stream = await findStreamSecrets(deps.db, streamId);
  if (!stream) return;
  const headers = JSON.parse(
    deps.secretBox.decrypt(stream.encrypted_headers, `audit-stream:${stream.id}:headers`),
  ) as StreamHeader[];
  const secret = deps.secretBox.decrypt(stream.encrypted_signing_secret, `audit-stream:${stream.id}:secret`);
  for (let round = 0; round < BATCHES_PER_CLAIM; round += 1) {
    if (round > 0) await extendClaim(deps.db, streamId, claimMsOf(deps));
    const rows = await pendingDeliveries(deps.db, streamId, BATCH);
    if (rows.length === 0) break;
    // Events pruned before delivery (a receiver down for longer than the retention) are skipped.
    const events = rows.filter((row) => row.hash !== null).map(deliveredEvent);
    const body = JSON.stringify(events);
    try {
      if (events.length > 0) {
        await postToReceiver(deps, stream.url, headers, body, {
          "x-keyward-signature": signDelivery(secret, body, Math.floor(deps.clock.now() / 1000)),
          "x-keyward-delivery": rows[0]!.outboxId,
        });
      }
    } catch (error) {
      const attempts = stream.attempts + 1;
      const retryInMs = Math.min(deps.env.AUDIT_STREAM_MAX_BACKOFF_MS, 250 * 2 ** Math.min(attempts, 14));
      await markFailed(deps.db, streamId, attempts, retryInMs, (error as Error).message);
      return;
    }
    const ids = rows.map((row) => row.outboxId);
    // The stream row first, then its outbox rows: the order a stream's deletion (and its cascade)
    // takes them, so the two can never wait on each other in a cycle.
    await inTransaction(deps.db, async (trx) => {
      await markHealthy(trx, streamId);
      await deleteDelivered(trx, streamId, ids);
    });
    stream.attempts = 0;
  }
  await releaseClaim(deps.db, streamId);
};

/** One pass: claim due streams one at a time until none is left. */
export const deliverAuditStreams = async (deps: AppDeps) => {
  for (;;) {
    const streamId = await claimDueStream(deps.db, claimMsOf(deps));
    if (!streamId) return;
    await deliverStream(deps, streamId);
  }
};

/** Delivers audit events to every stream, at least once and in queue order per stream. */
export const auditStreamJob: AppJob = {
  name: "audit-streams",
  start: (deps) =>
    loop(
      deps.env.AUDIT_STREAM_INTERVAL_MS,
      () => deliverAuditStreams(deps),
      (error) => deps.logger.error({ err: error }, "audit stream delivery pass failed"),
    ),
};
