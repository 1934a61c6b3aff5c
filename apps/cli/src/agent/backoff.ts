/**
 * Capped exponential backoff: 1 s, 2 s, 4 s … up to 30 s, with a little jitter so that many agents
 * restarted together do not knock on a recovering server at the same instant.
 */
export const createBackoff = (firstMs = 1000, maxMs = 30_000) => {
  let next = firstMs;
  return {
    next: () => {
      const delay = next;
      next = Math.min(next * 2, maxMs);
      return Math.round(delay * (0.85 + Math.random() * 0.3));
    },
    reset: () => {
      next = firstMs;
    },
  };
};

/** A sleep that ends early when the signal aborts. */
export const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
