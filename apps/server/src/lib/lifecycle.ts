import type { Response } from "express";

/**
 * Graceful shutdown's view of the HTTP side. Once draining, readiness is false and every response
 * not yet started carries `Connection: close`, so keep-alive clients move to another instance
 * instead of sending more requests here; the database is closed only when no request is in flight.
 */
export type Lifecycle = {
  isDraining: () => boolean;
  drain: () => void;
  inFlight: () => number;
  /** Resolves once no request is in flight (at once when none is). */
  idle: () => Promise<void>;
  /** A response has started its way through the app (the request front calls it). */
  opened: (res: Response) => void;
  /** That response closed: answered, or its connection gone. */
  closed: (res: Response) => void;
};

export const createLifecycle = (): Lifecycle => {
  let draining = false;
  const open = new Set<Response>();
  let waiters: (() => void)[] = [];
  return {
    isDraining: () => draining,
    drain: () => {
      draining = true;
      for (const res of open) if (!res.headersSent) res.setHeader("Connection", "close");
    },
    inFlight: () => open.size,
    idle: () => (open.size === 0 ? Promise.resolve() : new Promise<void>((resolve) => waiters.push(resolve))),
    opened: (res) => {
      if (draining) res.setHeader("Connection", "close");
      open.add(res);
    },
    closed: (res) => {
      open.delete(res);
      if (open.size > 0 || waiters.length === 0) return;
      const done = waiters;
      waiters = [];
      for (const resolve of done) resolve();
    },
  };
};
