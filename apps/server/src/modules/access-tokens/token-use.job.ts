import type { AppDeps, AppJob } from "../../context";
import { loop } from "../../lib/loop";
import { touchTokensLastUsed } from "./access-token.repository";

/**
 * Tokens' last-used times noted by requests and written by the token-use job, many per statement:
 * with tokens spread over many identities, a write per use (one UPDATE per request once each token
 * is seen less often than the interval) cost more than the request's own work. At most one flush
 * interval of notes is lost on a hard kill; the time is informational and never authorizes anything.
 */
export type TokenUseBuffer = { pending: Map<string, number>; dropped: number; flushing?: Promise<void> };

export const createTokenUseBuffer = (): TokenUseBuffer => ({ pending: new Map(), dropped: 0 });

/** Beyond this many tokens waiting (the database is down for long), new notes are dropped and counted. */
const MAX_PENDING = 100_000;
/** Tokens per statement. */
const BATCH = 1_000;
const FLUSH_INTERVAL_MS = 1_000;

export const bufferTokenUse = (buffer: TokenUseBuffer, tokenId: string, at: number) => {
  if (buffer.pending.size >= MAX_PENDING && !buffer.pending.has(tokenId)) {
    buffer.dropped += 1;
    return;
  }
  buffer.pending.set(tokenId, at);
};

/** Write every noted use, a batch per statement; a failed batch is noted again unless a newer note came. */
export const flushTokenUses = (deps: AppDeps): Promise<void> => {
  const buffer = deps.tokenUses;
  if (buffer.flushing) return buffer.flushing;
  const run = async () => {
    while (buffer.pending.size > 0) {
      const batch: [string, number][] = [];
      for (const entry of buffer.pending) {
        batch.push(entry);
        if (batch.length === BATCH) break;
      }
      for (const [tokenId] of batch) buffer.pending.delete(tokenId);
      try {
        await touchTokensLastUsed(
          deps.db,
          batch.map(([tokenId]) => tokenId),
          batch.map(([, at]) => new Date(at)),
        );
      } catch (error) {
        for (const [tokenId, at] of batch) if (!buffer.pending.has(tokenId)) bufferTokenUse(buffer, tokenId, at);
        throw error;
      }
    }
  };
  buffer.flushing = run().finally(() => {
    buffer.flushing = undefined;
  });
  return buffer.flushing;
};

/** Writes noted token uses every second, and once more on shutdown. */
export const tokenUseJob: AppJob = {
  name: "token-use",
  start: (deps) => {
    const stop = loop(
      FLUSH_INTERVAL_MS,
      () => flushTokenUses(deps),
      (error) => deps.logger.warn({ err: error }, "token uses could not be recorded; kept for the next flush"),
    );
    return async () => {
      await stop();
      await flushTokenUses(deps).catch((error: unknown) =>
        deps.logger.warn({ err: error, lost: deps.tokenUses.pending.size }, "token uses lost on shutdown"),
      );
    };
  },
};
