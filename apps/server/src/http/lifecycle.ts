import type { RequestHandler, Response } from "express";

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
  middleware: RequestHandler;
};

export const createLifecycle = (): Lifecycle => {
  let draining = false;
  const open = new Set<Response>();
  let waiters: (() => void)[] = [];
  const settle = () => {
    if (open.size > 0) return;
    const done = waiters;
    waiters = [];
    for (const resolve of done) resolve();
  };
  return {
    isDraining: () => draining,
    drain: () => {
      draining = true;
      for (const res of open) if (!res.headersSent) res.setHeader("Connection", "close");
    },
    inFlight: () => open.size,
    idle: () => (open.size === 0 ? Promise.resolve() : new Promise<void>((resolve) => waiters.push(resolve))),
    middleware: (_req, res, next) => {
      if (draining) res.setHeader("Connection", "close");
      open.add(res);
      res.once("close", () => {
        open.delete(res);
        settle();
      });
      next();
    },
  };
};
