import { describe, expect, it } from "vitest";
import { createBoundedCache } from "./bounded-cache";

const fakeClock = (start = 0) => {
  let now = start;
  return { now: () => now, advance: (ms: number) => void (now += ms) };
};

describe("bounded cache", () => {
  it("never holds more than maxEntries", () => {
    const cache = createBoundedCache<number>({ maxEntries: 3 });
    for (let i = 0; i < 10; i += 1) {
      cache.set(`k${i}`, i);
      expect(cache.size()).toBeLessThanOrEqual(3);
    }
    expect(cache.size()).toBe(3);
    expect(["k7", "k8", "k9"].map((k) => cache.get(k))).toEqual([7, 8, 9]);
  });

  it("a large full cache evicts its oldest sixty-fourth at once, then takes that many new keys freely", () => {
    const evicted: number[] = [];
    const cache = createBoundedCache<number>({ maxEntries: 640, onEvict: (v) => evicted.push(v) });
    for (let i = 0; i < 640; i += 1) cache.set(`k${i}`, i);
    cache.set("k640", 640);
    expect(evicted).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(cache.size()).toBe(631);
    for (let i = 641; i < 650; i += 1) cache.set(`k${i}`, i);
    expect(evicted).toHaveLength(10);
    expect(cache.size()).toBe(640);
    cache.set("k650", 650);
    expect(evicted).toHaveLength(20);
    expect(cache.get("k20")).toBe(20);
    expect(cache.get("k19")).toBeUndefined();
  });

  it("overwriting a key holds it once", () => {
    const cache = createBoundedCache<number>({ maxEntries: 2 });
    cache.set("a", 1);
    cache.set("a", 2);
    cache.set("b", 3);
    expect(cache.size()).toBe(2);
    expect(cache.get("a")).toBe(2);
    expect(cache.get("b")).toBe(3);
  });

  it("evicts the least recently used by default: a hit makes an entry the newest", () => {
    const evicted: number[] = [];
    const cache = createBoundedCache<number>({ maxEntries: 3, onEvict: (v) => evicted.push(v) });
    cache.set("a", 1);
    cache.set("b", 2);
    cache.set("c", 3);
    expect(cache.get("a")).toBe(1);
    cache.set("d", 4);
    expect(cache.get("b")).toBeUndefined();
    expect(evicted).toEqual([2]);
    cache.set("e", 5);
    expect(cache.get("c")).toBeUndefined();
    expect(evicted).toEqual([2, 3]);
    expect([cache.get("a"), cache.get("d"), cache.get("e")]).toEqual([1, 4, 5]);
  });

  it("with recency 'write', evicts the least recently written however often it is read", () => {
    const cache = createBoundedCache<number>({ maxEntries: 3, recency: "write" });
    cache.set("a", 1);
    cache.set("b", 2);
    cache.set("c", 3);
    expect(cache.get("a")).toBe(1);
    cache.set("d", 4);
    expect(cache.get("a")).toBeUndefined();
    // Writing an existing key again makes it the newest.
    cache.set("b", 20);
    cache.set("e", 5);
    expect(cache.get("c")).toBeUndefined();
    expect([cache.get("b"), cache.get("d"), cache.get("e")]).toEqual([20, 4, 5]);
  });

  it("an entry lives ttlMs from when it was set, on the injected clock", () => {
    const clock = fakeClock(1_000);
    const evicted: string[] = [];
    const cache = createBoundedCache<string>({ maxEntries: 10, ttlMs: 500, clock, onEvict: (v) => evicted.push(v) });
    cache.set("k", "v");
    clock.advance(499);
    expect(cache.get("k")).toBe("v");
    clock.advance(1);
    expect(cache.get("k")).toBeUndefined();
    expect(cache.size()).toBe(0);
    expect(evicted).toEqual(["v"]);
  });

  it("a hit does not extend an entry's lifetime; setting it again does", () => {
    const clock = fakeClock();
    const cache = createBoundedCache<string>({ maxEntries: 10, ttlMs: 100, clock });
    cache.set("k", "v1");
    clock.advance(90);
    expect(cache.get("k")).toBe("v1");
    cache.set("j", "w");
    clock.advance(10);
    expect(cache.get("k")).toBeUndefined();
    expect(cache.get("j")).toBe("w");
    cache.set("j", "w2");
    clock.advance(99);
    expect(cache.get("j")).toBe("w2");
  });

  it("reads the clock on every use, so a clock moved in place is seen", () => {
    const clock = { now: () => 0 };
    const cache = createBoundedCache<string>({ maxEntries: 10, ttlMs: 100, clock });
    cache.set("k", "v");
    clock.now = () => 100;
    expect(cache.get("k")).toBeUndefined();
  });

  it("delete drops an entry without calling onEvict; clear drops and releases every entry", () => {
    const evicted: number[] = [];
    const cache = createBoundedCache<number>({ maxEntries: 5, onEvict: (v) => evicted.push(v) });
    cache.set("a", 1);
    cache.set("b", 2);
    cache.set("c", 3);
    cache.delete("b");
    cache.delete("missing");
    expect(cache.get("b")).toBeUndefined();
    expect(cache.size()).toBe(2);
    expect(evicted).toEqual([]);
    cache.clear();
    expect(cache.size()).toBe(0);
    expect(evicted).toEqual([1, 3]);
    expect(cache.get("a")).toBeUndefined();
  });

  it("a deleted key frees its room: the next set evicts nothing", () => {
    const evicted: number[] = [];
    const cache = createBoundedCache<number>({ maxEntries: 2, onEvict: (v) => evicted.push(v) });
    cache.set("a", 1);
    cache.set("b", 2);
    cache.delete("a");
    cache.set("c", 3);
    expect(evicted).toEqual([]);
    expect([cache.get("b"), cache.get("c")]).toEqual([2, 3]);
  });

  it("refuses a bound below one entry", () => {
    expect(() => createBoundedCache<number>({ maxEntries: 0 })).toThrow(RangeError);
  });
});
