/**
 * At most `slots` pieces of heavy work at once in this process; the rest wait in order of arrival, each
 * at most `queueTimeoutMs`. A waiter past its deadline is told so (`enter` resolves `undefined`) and
 * leaves the queue: the caller answers "busy, retry" instead of holding the request indefinitely.
 * Work that waits holds nothing but its request: the gate is entered before the work takes memory.
 */
export type WorkGate = {
  /** A release function once a slot is free, or `undefined` when none freed up within the deadline. */
  enter: () => Promise<(() => void) | undefined>;
  /** Waiting now (not yet in a slot). */
  waiting: () => number;
  /** Holding a slot now. */
  running: () => number;
  /** About how long, in seconds, a newcomer would wait at the current pace (at least 1). */
  retryAfterSeconds: () => number;
};

type Waiter = { admit: (release: () => void) => void; timer?: NodeJS.Timeout };

export const createWorkGate = ({
  slots,
  queueTimeoutMs,
  now = () => Date.now(),
}: {
  slots: number;
  queueTimeoutMs: number;
  now?: () => number;
}): WorkGate => {
  let running = 0;
  const queue: Waiter[] = [];
  // The mean time a slot was held (exponentially weighted), for Retry-After.
  let meanHoldMs = 0;

  const admitted = () => {
    running += 1;
    const since = now();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const held = now() - since;
      meanHoldMs = meanHoldMs === 0 ? held : meanHoldMs * 0.8 + held * 0.2;
      running -= 1;
      const next = queue.shift();
      if (next) {
        clearTimeout(next.timer);
        next.admit(admitted());
      }
    };
  };

  return {
    enter: () => {
      if (running < slots) return Promise.resolve(admitted());
      if (queueTimeoutMs === 0) return Promise.resolve(undefined);
      return new Promise((resolve) => {
        const waiter: Waiter = { admit: resolve };
        waiter.timer = setTimeout(() => {
          const at = queue.indexOf(waiter);
          if (at !== -1) queue.splice(at, 1);
          resolve(undefined);
        }, queueTimeoutMs);
        waiter.timer.unref();
        queue.push(waiter);
      });
    },
    waiting: () => queue.length,
    running: () => running,
    retryAfterSeconds: () => Math.max(1, Math.ceil(((queue.length + 1) * meanHoldMs) / slots / 1000)),
  };
};
