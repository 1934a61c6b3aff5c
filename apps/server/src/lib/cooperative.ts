import { performance } from "node:perf_hooks";

/**
 * Long synchronous work split into slices: `pause()` gives the event loop back (other requests'
 * I/O and timers run) once `sliceMs` of work has passed since the last pause, and costs a clock read
 * otherwise. One per piece of work; call it between items.
 */
export const cooperative = (sliceMs = 1) => {
  let since = performance.now();
  return {
    /** True when the slice is used up: the caller should `await pause()`. */
    due: () => performance.now() - since >= sliceMs,
    pause: async () => {
      await new Promise(setImmediate);
      since = performance.now();
    },
  };
};

export type Cooperative = ReturnType<typeof cooperative>;
