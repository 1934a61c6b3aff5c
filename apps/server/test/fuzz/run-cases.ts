import { afterAll, beforeAll, expect, it } from "vitest";
import { operations, type Operation } from "./operations";
import { describeViolations, newTally, send, sendAll, type RawRequest } from "./send";
import { buildFuzzWorld, type FuzzWorld } from "./world";

/** Deletes run after everything else, so the project, CA and identities the requests aim at stay there until then. */
const destructiveLast = [
  ...operations.filter((operation) => operation.method !== "DELETE"),
  ...operations.filter((operation) => operation.method === "DELETE"),
];

/**
 * One test per operation of the contract: the requests `build` makes for it are sent to the real app,
 * and any 5xx, non-JSON error, stack trace or missing answer fails that operation's test, printing
 * the requests that caused it. The app must still answer afterwards.
 */
export const fuzzEveryOperation = (kind: string, build: (operation: Operation, world: FuzzWorld) => RawRequest[]) => {
  let world: FuzzWorld;
  const tally = newTally();
  beforeAll(async () => {
    world = await buildFuzzWorld();
  });
  afterAll(async () => {
    const alive = await send(world.baseUrl, { label: "status", method: "GET", path: "/api/status" });
    const summary = describeViolations(tally.violations, 0);
    console.info(`fuzz (${kind}): ${tally.requests} requests, ${tally.violations.length} violations\n${summary}`);
    expect(alive.status).toBe(200);
  });
  it.each(destructiveLast.map((operation) => [operation.name, operation] as const))("%s", async (_name, operation) => {
    const requests = build(operation, world);
    const before = tally.violations.length;
    await sendAll(world.baseUrl, requests, tally);
    const found = tally.violations.slice(before);
    expect(found.length, describeViolations(found)).toBe(0);
  });
};
