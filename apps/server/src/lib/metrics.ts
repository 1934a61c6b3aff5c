import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";

/** Pool figures the gauges read at scrape time (PostgreSQL only). */
export type PoolStats = { total: number; idle: number; waiting: number };

/**
 * The process's Prometheus metrics, in a registry of its own (each test app has a fresh one).
 * Labels are bounded: the route template (never the raw path), the method and the status; no
 * identity, token or secret ever becomes a label.
 */
export type Metrics = ReturnType<typeof createMetrics>;

export const createMetrics = (poolStats: () => PoolStats | undefined = () => undefined) => {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const requests = new Counter({
    name: "keyward_http_requests_total",
    help: "HTTP requests answered, by route template, method and status",
    labelNames: ["route", "method", "status"] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: "keyward_http_request_duration_seconds",
    help: "Time to answer an HTTP request, by route template and method",
    labelNames: ["route", "method"] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const pool = new Gauge({
    name: "keyward_db_pool_connections",
    help: "PostgreSQL pool connections: total open, idle, and requests waiting for one",
    labelNames: ["state"] as const,
    registers: [registry],
    collect() {
      const stats = poolStats();
      if (!stats) return;
      this.set({ state: "total" }, stats.total);
      this.set({ state: "idle" }, stats.idle);
      this.set({ state: "waiting" }, stats.waiting);
    },
  });
  const leaseRevocationLag = new Histogram({
    name: "keyward_lease_revocation_lag_seconds",
    help: "Time from a lease's expiry (or revocation request) to its revocation on the target",
    buckets: [0.5, 1, 2, 5, 10, 30, 60, 300, 1800],
    registers: [registry],
  });
  const jobFailures = new Counter({
    name: "keyward_job_failures_total",
    help: "Background job passes (or items) that failed, by job",
    labelNames: ["job"] as const,
    registers: [registry],
  });
  const rateLimited = new Counter({
    name: "keyward_rate_limited_total",
    help: "Requests refused with 429, by limit",
    labelNames: ["limit"] as const,
    registers: [registry],
  });
  /** Each bounded in-process cache's entry count, read at scrape time (names are fixed: a bounded label). */
  const cacheSizes = new Map<string, () => number>();
  const cacheEntries = new Gauge({
    name: "keyward_cache_entries",
    help: "Entries held by each bounded in-process cache (tokens, abilities, ...), by cache",
    labelNames: ["cache"] as const,
    registers: [registry],
    collect() {
      for (const [cache, size] of cacheSizes) this.set({ cache }, size());
    },
  });
  const watchCacheSize = (cache: string, size: () => number) => void cacheSizes.set(cache, size);
  // One labelled child per (route, method, status), looked up by one string key: prom-client would
  // otherwise hash the label set on every request. Bounded by the contract's routes.
  const perRoute = new Map<string, { count: { inc: () => void }; time: { observe: (seconds: number) => void } }>();
  /** One answered request under the route template Express matched ("unmatched" for unknown paths). */
  const recordRequest = (route: string, method: string, status: number, seconds: number) => {
    const key = `${method} ${status} ${route}`;
    let children = perRoute.get(key);
    if (!children) {
      children = {
        count: requests.labels({ route, method, status: String(status) }),
        time: duration.labels({ route, method }),
      };
      perRoute.set(key, children);
    }
    children.count.inc();
    children.time.observe(seconds);
  };
  return {
    registry,
    requests,
    duration,
    pool,
    leaseRevocationLag,
    jobFailures,
    rateLimited,
    cacheEntries,
    watchCacheSize,
    recordRequest,
  };
};
