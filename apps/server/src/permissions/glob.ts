import picomatch from "picomatch";
import { createBoundedCache } from "../lib/bounded-cache";

/**
 * Compiled glob matchers, bounded by pattern. picomatch's isMatch recompiles on every call; a
 * compiled matcher is 50-90x faster. Patterns are validated on write (contract glob-pattern.ts),
 * so none backtracks badly. Options match the reference: `strictSlashes: false`, dot files not
 * matched by wildcards.
 */
type Matcher = (value: string) => boolean;
/** Least recently written evicted first, so a hit on the permission-check path moves nothing. */
const cache = createBoundedCache<Matcher>({ maxEntries: 5_000, recency: "write" });

/** A pure memo: the same pattern always compiles to the same matcher, so sharing it is safe. */
const cached = (key: string, compile: () => Matcher): Matcher => {
  let matcher = cache.get(key);
  if (!matcher) {
    matcher = compile();
    cache.set(key, matcher);
  }
  return matcher;
};

/** Path-style globs of permission conditions. */
export const globMatcher = (pattern: string): Matcher =>
  cached(`p:${pattern}`, () => picomatch(pattern, { strictSlashes: false }));

/** Plain globs over claim values and names (auth-method policies), picomatch's defaults. */
export const plainGlobMatcher = (pattern: string): Matcher => cached(`s:${pattern}`, () => picomatch(pattern));

export const globMatches = (pattern: string, value: string) => globMatcher(pattern)(value);
