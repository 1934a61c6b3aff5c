import { setTimeout as sleep } from "node:timers/promises";
import type { AppDeps, AppJob } from "../../context";
import { inTransaction, type Tx } from "../../db/transaction";
import { loop } from "../../lib/loop";
import { chainEventsAfter, chainsWithExpiredHead, pruneChainRun } from "./audit.repository";

export type PruneOptions = {
  /** Events removed per transaction: small, so no append waits long behind one. */
  batch?: number;
  /** Pause after each full batch, so appends and reads keep the database between them. */
  pauseMs?: number;
};

const BATCH = 1_000;
const PAUSE_MS = 20;
const CHAINS_PER_PASS = 100;

/**
 * Remove one run of a chain's expired prefix (at most `batch` events, just after its anchor) and
 * move the anchor to the last removed event: what remains still verifies from the anchor. An event
 * that expires before an older one (a shortened retention) waits for the older one: pruning never
 * opens a gap.
 */
const pruneRun = async (trx: Tx, chainId: string, afterSeq: string, now: Date, batch: number) => {
  const run = await chainEventsAfter(trx, chainId, afterSeq, now, batch);
  let last: { seq: string; hash: string } | undefined;
  for (const row of run) {
    if (!row.expired) break;
    last = { seq: String(row.seq), hash: row.hash };
  }
  if (!last) return { removed: 0, last: undefined, more: false };
  const removed = await pruneChainRun(trx, chainId, afterSeq, last);
  // More may be expired only if the whole run was.
  return { removed, last: last.seq, more: run.length === batch && last.seq === run.at(-1)!.seq };
};

/**
 * One pruning pass over every chain with expired events, in short transactions of at most `batch`
 * events each; returns how many events were removed.
 */
export const pruneAuditLogs = async (deps: AppDeps, options: PruneOptions = {}) => {
  const batch = options.batch ?? BATCH;
  const pauseMs = options.pauseMs ?? PAUSE_MS;
  const now = new Date(deps.clock.now());
  let total = 0;
  for (;;) {
    const chains = await chainsWithExpiredHead(deps.db, now, CHAINS_PER_PASS);
    if (chains.length === 0) return total;
    for (const chain of chains) {
      let afterSeq = String(chain.pruned_seq);
      for (;;) {
        const done = await inTransaction(deps.db, (trx) => pruneRun(trx, chain.chain_id, afterSeq, now, batch));
        total += done.removed;
        if (!done.more || !done.last) break;
        afterSeq = done.last;
        if (pauseMs > 0) await sleep(pauseMs);
      }
    }
  }
};

/** Removes expired audit events (AUDIT_LOG_RETENTION_DAYS, or a project's shorter retention) hourly. */
export const auditRetentionJob: AppJob = {
  name: "audit-retention",
  start: (deps) =>
    loop(
      3_600_000,
      () => pruneAuditLogs(deps),
      (error) => deps.logger.error({ err: error }, "audit log pruning failed"),
    ),
};
