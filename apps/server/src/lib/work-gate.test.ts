import { afterEach, describe, expect, it, vi } from "vitest";
import { createWorkGate } from "./work-gate";

describe("createWorkGate", () => {
  afterEach(() => vi.useRealTimers());

  it("admits up to its slots at once, then the waiters in order of arrival", async () => {
    const gate = createWorkGate({ slots: 2, queueTimeoutMs: 60_000 });
    const first = (await gate.enter())!;
    const second = (await gate.enter())!;
    expect(gate.running()).toBe(2);
    const order: string[] = [];
    const third = gate.enter().then((release) => (order.push("third"), release!));
    const fourth = gate.enter().then((release) => (order.push("fourth"), release!));
    expect(gate.waiting()).toBe(2);
    second();
    // Released twice, the slot is handed on once.
    second();
    const thirdRelease = await third;
    expect(order).toEqual(["third"]);
    expect(gate.running()).toBe(2);
    first();
    (await fourth)();
    thirdRelease();
    expect(order).toEqual(["third", "fourth"]);
    expect(gate.running()).toBe(0);
    expect(gate.waiting()).toBe(0);
  });

  it("refuses at once when it may not queue, and a waiter past its deadline leaves the queue", async () => {
    expect(await createWorkGate({ slots: 1, queueTimeoutMs: 0 }).enter()).toBeDefined();
    const full = createWorkGate({ slots: 1, queueTimeoutMs: 0 });
    const held = (await full.enter())!;
    expect(await full.enter()).toBeUndefined();
    held();

    vi.useFakeTimers();
    const gate = createWorkGate({ slots: 1, queueTimeoutMs: 1_000 });
    const release = (await gate.enter())!;
    const late = gate.enter();
    const later = gate.enter();
    expect(gate.waiting()).toBe(2);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(await late).toBeUndefined();
    expect(await later).toBeUndefined();
    expect(gate.waiting()).toBe(0);
    // The slot freed after the deadline goes to nobody who gave up.
    release();
    expect(gate.running()).toBe(0);
  });

  it("estimates Retry-After from how long slots were held and how many wait", async () => {
    let now = 0;
    const gate = createWorkGate({ slots: 1, queueTimeoutMs: 60_000, now: () => now });
    expect(gate.retryAfterSeconds()).toBe(1);
    const release = (await gate.enter())!;
    now += 4_000;
    release();
    const held = (await gate.enter())!;
    void gate.enter();
    void gate.enter();
    // Two waiting and a newcomer, about 4 s each, one slot.
    expect(gate.retryAfterSeconds()).toBe(12);
    held();
  });
});
