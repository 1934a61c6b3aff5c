/** Fixed-window rate-limit counters (migration 0021). */
export interface RateLimitCountersTable {
  key: string;
  window_start: Date;
  hits: number;
}

export interface RuntimeTables {
  rate_limit_counters: RateLimitCountersTable;
}
