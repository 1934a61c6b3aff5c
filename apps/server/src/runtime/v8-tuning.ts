import { setFlagsFromString } from "node:v8";

/**
 * V8 settings of a serving process, applied before it builds the app (worker.ts, and the bench's
 * stand-in for it).
 *
 * Allocation-site pretenuring off. When most objects of one allocation site outlive a young-generation
 * collection, V8 starts allocating that site's objects directly in the old generation. On a request
 * path that backfires: such an object is garbage a moment later, but until the next full collection
 * it still points at the young objects of its request, and each scavenge copies them and then
 * promotes them, and with them what they point to. Measured on the privilege read (PostgreSQL, 32
 * connections, `--trace-gc-nvp`): ~2 MB promoted per scavenge and 3.5 ms pauses with it, 8 KB and
 * 0.7 ms without; 12.7k -> 15.6k req/s, p99 10.1 -> 4.4 ms. Long-lived objects lose nothing that
 * matters: they are copied once more before promotion.
 */
export const tuneV8 = () => {
  setFlagsFromString("--no-allocation-site-pretenuring");
};
