import type { AppDeps, AppJob } from "../../context";
import { inTransaction } from "../../db/transaction";
import { loop } from "../../lib/loop";
import {
  prepareAuditEvent,
  reducedAuditEvent,
  writePreparedAuditEvents,
  type AuditEventInput,
  type PreparedAuditEvent,
} from "./audit-writer";

/** Read events waiting to be written; at most one flush interval of them is lost on a hard kill. */
export type AuditBuffer = { pending: PreparedAuditEvent[]; dropped: number; flushing?: Promise<void> };

export const createAuditBuffer = (): AuditBuffer => ({ pending: [], dropped: 0 });

/** Beyond this many waiting events (the database is down for long), the oldest are dropped and counted. */
const MAX_PENDING = 200_000;
/**
 * Events per transaction. Linking and hashing an event into its chain is synchronous work (a few µs:
 * its canonical JSON was written when it was buffered): a batch keeps each flush step from holding
 * the event loop for more than a millisecond or two, so requests arriving meanwhile do not queue behind it.
 */
const BATCH = 200;

/**
 * Metadata that cannot be serialised (a cycle) could never be written: it must neither throw into
 * the response's finish handler nor stay in the buffer to fail every flush. The event is kept
 * without it, marked so.
 */
const prepareOrReduce = (deps: AppDeps, event: AuditEventInput): PreparedAuditEvent | undefined => {
  try {
    return prepareAuditEvent(event);
  } catch {
    deps.logger.warn({ event: event.type }, "audit event recorded without its metadata: it cannot be serialised");
  }
  try {
    return prepareAuditEvent(reducedAuditEvent(event));
  } catch (error) {
    deps.logger.error({ err: error, event: event.type }, "audit event could not be recorded");
    return undefined;
  }
};

export const bufferAuditEvent = (deps: AppDeps, event: AuditEventInput) => {
  const buffer = deps.auditBuffer;
  const prepared = prepareOrReduce(deps, event);
  if (!prepared) {
    buffer.dropped += 1;
    return;
  }
  buffer.pending.push(prepared);
  if (buffer.pending.length > MAX_PENDING) {
    buffer.pending.splice(0, buffer.pending.length - MAX_PENDING);
    buffer.dropped += 1;
  }
};

/**
 * Write every buffered event, in batches, each batch in one transaction; a failed batch stays buffered.
 * Between batches the loop gives way to the event loop: on PGlite a query settles in microtasks, so
 * without it a second's worth of events (ten batches at 2k reads/s) ran as one stretch of ~250 ms in
 * which no request was even read (p99 of the secret get on PGlite: 250 ms with it, ~50 ms without).
 * The PGlite driver's own turn (pglite-dialect.ts) comes inside a batch's transaction, while it holds
 * the one connection; this one comes between transactions, so requests read meanwhile take the
 * connection before the next batch (without it, with the driver's turn alone: p99 ~65 ms).
 */
export const flushAuditBuffer = (deps: AppDeps): Promise<void> => {
  const buffer = deps.auditBuffer;
  if (buffer.flushing) return buffer.flushing;
  const run = async () => {
    while (buffer.pending.length > 0) {
      const batch = buffer.pending.slice(0, BATCH);
      await inTransaction(deps.db, (trx) => writePreparedAuditEvents(trx, deps.env.AUDIT_LOG_RETENTION_DAYS, batch));
      buffer.pending.splice(0, batch.length);
      if (buffer.pending.length > 0) await new Promise<void>((resolve) => setImmediate(resolve));
    }
  };
  buffer.flushing = run().finally(() => {
    buffer.flushing = undefined;
  });
  return buffer.flushing;
};

/** Writes buffered read events every AUDIT_LOG_FLUSH_INTERVAL_MS, and once more on shutdown. */
export const auditFlushJob: AppJob = {
  name: "audit-flush",
  start: (deps) => {
    const stop = loop(
      deps.env.AUDIT_LOG_FLUSH_INTERVAL_MS,
      () => flushAuditBuffer(deps),
      (error) => deps.logger.error({ err: error }, "audit events could not be written; kept for the next flush"),
    );
    return async () => {
      await stop();
      await flushAuditBuffer(deps).catch((error: unknown) =>
        deps.logger.error({ err: error, lost: deps.auditBuffer.pending.length }, "audit events lost on shutdown"),
      );
    };
  },
};
