import { describe, expect, it } from "vitest";
import type { Logger } from "../lib/logger";
import { createDbHealth, isDatabaseUnavailable } from "./health";

const recordingLogger = () => {
  const lines: string[] = [];
  const logger = {
    error: (_fields: unknown, msg: string) => lines.push(`error ${msg}`),
    info: (msg: string) => lines.push(`info ${msg}`),
  } as unknown as Logger;
  return { logger, lines };
};

describe("database health", () => {
  it("starts up when the database is known to be there", () => {
    expect(createDbHealth().isUp()).toBe(true);
  });

  it("starting unknown, is not ready until a statement succeeds, and says nothing then", () => {
    const { logger, lines } = recordingLogger();
    const health = createDbHealth(logger, { known: false });
    expect(health.isUp()).toBe(false);
    health.succeeded();
    expect(health.isUp()).toBe(true);
    expect(lines).toEqual([]);
  });

  it("starting unknown, logs an outage found first once, and its end once", () => {
    const { logger, lines } = recordingLogger();
    const health = createDbHealth(logger, { known: false });
    const refused = Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" });
    health.failed(refused);
    health.failed(refused);
    expect(health.isUp()).toBe(false);
    health.succeeded();
    health.succeeded();
    expect(health.isUp()).toBe(true);
    expect(lines).toEqual(["error database unavailable", "info database available again"]);
  });

  it("counts a connection lost or refused as unavailable, not a failed statement", () => {
    expect(isDatabaseUnavailable(Object.assign(new Error("x"), { code: "ECONNREFUSED" }))).toBe(true);
    expect(isDatabaseUnavailable(Object.assign(new Error("terminating connection"), { code: "57P01" }))).toBe(true);
    expect(isDatabaseUnavailable(new Error("Connection terminated unexpectedly"))).toBe(true);
    expect(isDatabaseUnavailable(Object.assign(new Error("duplicate key"), { code: "23505" }))).toBe(false);
  });
});
