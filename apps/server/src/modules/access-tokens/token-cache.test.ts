import { describe, expect, it } from "vitest";
import { createTokenCache } from "./token-cache";

/** A lookup that answers when told to, counting how often it was started. */
const gatedLookup = <T>() => {
  let started = 0;
  const gates: { resolve: (v: T) => void; reject: (e: Error) => void }[] = [];
  const lookup = () => {
    started += 1;
    return new Promise<T>((resolve, reject) => gates.push({ resolve, reject }));
  };
  return { lookup, started: () => started, gates };
};

const always = () => "second" as const;
const untilChanged = () => "until-changed" as const;

describe("token cache", () => {
  it("serves every caller that misses while a lookup runs from that one lookup, then from the cache", async () => {
    const cache = createTokenCache<string>({ now: () => 0 });
    const { lookup, started, gates } = gatedLookup<string>();
    const waiting = Array.from({ length: 20 }, () => cache.load("k", lookup, always));
    expect(started()).toBe(1);
    gates[0]!.resolve("row");
    expect(await Promise.all(waiting)).toEqual(Array(20).fill("row"));
    expect(await cache.load("k", lookup, always)).toBe("row");
    expect(started()).toBe(1);
  });

  it("looks up again once the entry is older than its lifetime", async () => {
    let now = 0;
    const cache = createTokenCache<string>({ now: () => now }, { shortTtlMs: 1_000 });
    const { lookup, started, gates } = gatedLookup<string>();
    const first = cache.load("k", lookup, always);
    gates[0]!.resolve("old");
    await first;
    now = 999;
    expect(await cache.load("k", lookup, always)).toBe("old");
    now = 1_000;
    const second = cache.load("k", lookup, always);
    expect(started()).toBe(2);
    gates[1]!.resolve("new");
    expect(await second).toBe("new");
  });

  it("shares but does not keep a value `keep` refuses (a use-limited token)", async () => {
    const cache = createTokenCache<string>({ now: () => 0 });
    const { lookup, started, gates } = gatedLookup<string>();
    const both = [cache.load("k", lookup, () => "never" as const), cache.load("k", lookup, () => "never" as const)];
    gates[0]!.resolve("limited");
    expect(await Promise.all(both)).toEqual(["limited", "limited"]);
    void cache.load("k", lookup, () => "never" as const);
    expect(started()).toBe(2);
  });

  it("shares a failed lookup's error with its waiters and keeps nothing", async () => {
    const cache = createTokenCache<string>({ now: () => 0 });
    const { lookup, started, gates } = gatedLookup<string>();
    const both = [cache.load("k", lookup, always), cache.load("k", lookup, always)];
    gates[0]!.reject(new Error("database unavailable"));
    for (const result of await Promise.allSettled(both)) expect(result).toMatchObject({ status: "rejected" });
    const retry = cache.load("k", lookup, always);
    expect(started()).toBe(2);
    gates[1]!.resolve("row");
    expect(await retry).toBe("row");
  });

  it("after a clear, a lookup begun before it neither fills the cache nor serves new callers", async () => {
    const cache = createTokenCache<string>({ now: () => 0 });
    const { lookup, started, gates } = gatedLookup<string>();
    const before = cache.load("k", lookup, always);
    cache.clear(); // a revocation committed while the row was being read
    const after = cache.load("k", lookup, always);
    expect(started()).toBe(2);
    gates[0]!.resolve("read before the revocation");
    expect(await before).toBe("read before the revocation");
    gates[1]!.reject(new Error("No identity access token found"));
    await expect(after).rejects.toThrow("No identity access token found");
    // Neither result was kept: the next caller looks the token up again.
    const next = cache.load("k", lookup, always);
    expect(started()).toBe(3);
    gates[2]!.resolve("row");
    expect(await next).toBe("row");
  });

  it("forgets one key, and keeps no lookup that began before", async () => {
    const cache = createTokenCache<string>({ now: () => 0 });
    const { lookup, started, gates } = gatedLookup<string>();
    for (const key of ["a", "b"]) {
      const loading = cache.load(key, lookup, always);
      gates[started() - 1]!.resolve(key);
      await loading;
    }
    const running = cache.load("c", lookup, always);
    cache.forget("a");
    expect(cache.size()).toBe(1);
    expect(await cache.load("b", lookup, always)).toBe("b");
    gates[started() - 1]!.resolve("c");
    expect(await running).toBe("c");
    expect(cache.size()).toBe(1);
  });

  it("keys are independent", async () => {
    const cache = createTokenCache<string>({ now: () => 0 });
    const { lookup, started, gates } = gatedLookup<string>();
    const a = cache.load("a", lookup, always);
    const b = cache.load("b", lookup, always);
    expect(started()).toBe(2);
    gates[0]!.resolve("A");
    gates[1]!.resolve("B");
    expect([await a, await b]).toEqual(["A", "B"]);
  });

  it("keeps an entry until changed only while notices are heard, and drops every entry when that starts or stops", async () => {
    let now = 0;
    const cache = createTokenCache<string>({ now: () => now }, { shortTtlMs: 1_000, followedTtlMs: 60_000 });
    const { lookup, started, gates } = gatedLookup<string>();
    const answer = async (value: string) => {
      const loading = cache.load("k", lookup, untilChanged);
      gates[started() - 1]!.resolve(value);
      return loading;
    };
    // Not following: a second, like any entry.
    expect(await answer("unheard")).toBe("unheard");
    now = 1_000;
    expect(await answer("heard")).toBe("heard");
    expect(started()).toBe(2);
    // Following: the entry is dropped, and the next one lasts until a change (or the bound).
    cache.follow(true);
    expect(cache.size()).toBe(0);
    expect(await answer("followed")).toBe("followed");
    now = 60_999;
    expect(await cache.load("k", lookup, untilChanged)).toBe("followed");
    expect(await cache.load("k", lookup, always)).toBe("followed");
    expect(started()).toBe(3);
    // A change: gone at once.
    cache.clear();
    expect(await answer("changed")).toBe("changed");
    expect(started()).toBe(4);
    // A "second" entry stays a second even while following.
    cache.clear();
    const brief = cache.load("k", lookup, always);
    gates[4]!.resolve("brief");
    await brief;
    now += 1_000;
    expect(await answer("after a second")).toBe("after a second");
    // Notices lost: every entry dropped, and a lookup running meanwhile is not kept.
    const running = cache.load("j", lookup, untilChanged);
    cache.follow(false);
    expect(cache.size()).toBe(0);
    gates[started() - 1]!.resolve("raced");
    expect(await running).toBe("raced");
    expect(cache.size()).toBe(0);
  });
});
