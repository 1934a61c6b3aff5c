import type { Clock } from "../../context";
import { createBoundedCache, type BoundedCache } from "../../lib/bounded-cache";

/** Signed OCSP answers kept at most: each is one DER response (well under 2 KB for ten certificates). */
export const OCSP_ANSWER_CACHE_MAX_ENTRIES = 4_096;
/** How long a signed OCSP answer is given again to the same question while the statuses it states hold. */
export const OCSP_ANSWER_TTL_MS = 60_000;

declare module "../../context" {
  interface AppDeps {
    /**
     * Signed OCSP answers by CA, the CertIDs asked and the statuses read for them: an entry is found
     * only while the database still says what it signed, so a revocation is never answered from here.
     */
    ocspAnswers: BoundedCache<Buffer>;
  }
}

export const createPkiState = (clock: Clock) => ({
  ocspAnswers: createBoundedCache<Buffer>({
    maxEntries: OCSP_ANSWER_CACHE_MAX_ENTRIES,
    ttlMs: OCSP_ANSWER_TTL_MS,
    clock,
  }),
});
