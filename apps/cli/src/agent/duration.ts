const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * A duration in milliseconds: "500ms", "30s", "5m", "1h", "1d", or a bare number of seconds (as
 * Infisical's agent reads `polling-interval` and `timeout`). Undefined for anything else.
 */
export const parseDuration = (value: string | number): number | undefined => {
  if (typeof value === "number") return Number.isFinite(value) && value >= 0 ? value * 1000 : undefined;
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/.exec(value);
  if (!match) return undefined;
  return Number(match[1]) * UNITS[match[2] ?? "s"]!;
};
