/**
 * Duration strings as `ms` reads them: "90", "1.5h", "2 days", "10m", case-insensitive.
 * A bare number means milliseconds. Returns undefined for anything else.
 */
const UNIT_MS: Record<string, number> = {
  ms: 1,
  msec: 1,
  msecs: 1,
  millisecond: 1,
  milliseconds: 1,
  s: 1000,
  sec: 1000,
  secs: 1000,
  second: 1000,
  seconds: 1000,
  m: 60_000,
  min: 60_000,
  mins: 60_000,
  minute: 60_000,
  minutes: 60_000,
  h: 3_600_000,
  hr: 3_600_000,
  hrs: 3_600_000,
  hour: 3_600_000,
  hours: 3_600_000,
  d: 86_400_000,
  day: 86_400_000,
  days: 86_400_000,
  w: 604_800_000,
  week: 604_800_000,
  weeks: 604_800_000,
  y: 31_557_600_000,
  yr: 31_557_600_000,
  yrs: 31_557_600_000,
  year: 31_557_600_000,
  years: 31_557_600_000,
};
const DURATION = /^(-?(?:\d+)?\.?\d+) *([a-z]+)?$/i;

export const parseDuration = (value: string): number | undefined => {
  if (typeof value !== "string" || value.length === 0 || value.length > 100) return undefined;
  const match = DURATION.exec(value.trim());
  if (!match) return undefined;
  const amount = Number.parseFloat(match[1] ?? "");
  const unit = (match[2] ?? "ms").toLowerCase();
  const factor = UNIT_MS[unit];
  if (factor === undefined || !Number.isFinite(amount)) return undefined;
  return amount * factor;
};
