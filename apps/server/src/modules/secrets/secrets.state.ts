import { createBoundedCache, type BoundedCache } from "../../lib/bounded-cache";
import { createWorkGate, type WorkGate } from "../../lib/work-gate";
import { createReferenceFreeMemo, type ReferenceFreeMemo } from "./reference-free";

declare module "../../context" {
  interface AppDeps {
    /** Large secret lists (more rows than `largeRows`) in this process: a few at once, the rest queued. */
    secretLists: SecretListsState;
  }
}

export type SecretListsState = {
  gate: WorkGate;
  /** A list of more rows than this goes through the gate. */
  largeRows: number;
  /**
   * Whether each list (root folder, recursive or not, paged or whole) was large when last read. One seen
   * large enters the gate before its rows are read, so a queued request holds no rows; one seen small
   * is read at once; only a list not seen yet learns its size (see `sizing`).
   */
  seenLarge: BoundedCache<boolean>;
  /**
   * Lists not seen yet whose size is being learnt (read by a request now): a request for the same list
   * meanwhile waits for the verdict instead of reading the rows too, so a burst of lists of a folder not
   * yet seen reads its rows once before the gate instead of once per request.
   */
  sizing: Map<string, Promise<boolean>>;
  /** Values a streamed list found to hold no reference (see createReferenceFreeMemo). */
  referenceFree: ReferenceFreeMemo;
};

export const createSecretListsState = (limits: { largeRows: number; slots: number; queueTimeoutMs: number }) => ({
  secretLists: {
    gate: createWorkGate({ slots: limits.slots, queueTimeoutMs: limits.queueTimeoutMs }),
    largeRows: limits.largeRows,
    seenLarge: createBoundedCache<boolean>({ maxEntries: 10_000 }),
    sizing: new Map<string, Promise<boolean>>(),
    referenceFree: createReferenceFreeMemo(),
  } satisfies SecretListsState,
});
