import { setTimeout as sleep } from "node:timers/promises";
import type { AppDeps, AppJob } from "../../context";
import type { Database } from "../../db/database";
import { loop } from "../../lib/loop";
import {
  anchorChain,
  chainEventsAfter,
  chainsWithExpiredHead,
  deleteBelowAnchors,
  deleteChainRun,
} from "./audit.repository";

export type PruneOptions = {
  /** Events removed per statement: a bounded run, so each delete stays short. */
  batch?: number;
  /** Pause after each full batch, so appends and reads keep the database between them. */
  pauseMs?: number;
};

const BATCH = 1_000;
const PAUSE_MS = 20;
const CHAINS_PER_PASS = 100;

/**
 * Remove one run of a chain's expired prefix (at most `batch` events, just after its anchor). The
 * anchor moves first, to the run's last event, in a statement of its own; then the run is deleted in
 * another. An append locks the chain's head row, so it waits at most for the one-row anchor update,
 * never for a deletion's commit (which flushes the WAL of a thousand rows and their indexes). Between
 * the two statements the run is below the anchor: no longer part of the chain (verification starts
 * after the anchor and does not count it), and deleted by the next pass if this one stops there.
 * An event that expires before an older one (a shortened retention) waits for the older one: pruning
 * never opens a gap.
 */
const pruneRun = async (db: Database, chainId: string, afterSeq: string, now: Date, batch: number) => {
  const run = await chainEventsAfter(db, chainId, afterSeq, now, batch);
  let last: { seq: string; hash: string } | undefined;
  for (const row of run) {
    if (!row.expired) break;
    last = { seq: String(row.seq), hash: row.hash };
  }
  if (!last) return { removed: 0, last: undefined, more: false };
  await anchorChain(db, chainId, last);
  const removed = await deleteChainRun(db, chainId, afterSeq, last.seq);
  // More may be expired only if the whole run was.
  return { removed, last: last.seq, more: run.length === batch && last.seq === run.at(-1)!.seq };
};

/**
 * One pruning pass over every chain with expired events, a run of at most `batch` events at a time;
 * returns how many events were removed. It begins with what an earlier pass left below an anchor.
 */
export const pruneAuditLogs = async (deps: AppDeps, options: PruneOptions = {}) => {
  const batch = options.batch ?? BATCH;
  const pauseMs = options.pauseMs ?? PAUSE_MS;
  const now = new Date(deps.clock.now());
  let total = 0;
  for (;;) {
    const left = await deleteBelowAnchors(deps.db, batch);
    total += left;
    if (left < batch) break;
  }
  for (;;) {
    const chains = await chainsWithExpiredHead(deps.db, now, CHAINS_PER_PASS);
    if (chains.length === 0) return total;
    for (const chain of chains) {
      let afterSeq = String(chain.pruned_seq);
      for (;;) {
        const done = await pruneRun(deps.db, chain.chain_id, afterSeq, now, batch);
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
