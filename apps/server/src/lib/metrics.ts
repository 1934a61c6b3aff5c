import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { RequestHandler } from "express";

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
  return { registry, requests, duration, pool, leaseRevocationLag, jobFailures, rateLimited };
};

/** Counts every answer under the route template Express matched ("unmatched" for 404s of unknown paths). */
export const requestMetrics =
  (metrics: Metrics): RequestHandler =>
  (req, res, next) => {
    const started = process.hrtime.bigint();
    res.once("finish", () => {
      const template = (req.route as { path?: unknown } | undefined)?.path;
      const route = typeof template === "string" ? `${req.baseUrl}${template}` : "unmatched";
      const method = req.method;
      metrics.requests.inc({ route, method, status: String(res.statusCode) });
      metrics.duration.observe({ route, method }, Number(process.hrtime.bigint() - started) / 1e9);
    });
    next();
  };
