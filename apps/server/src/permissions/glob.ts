import picomatch from "picomatch";

/**
 * Compiled glob matchers, bounded by pattern. picomatch's isMatch recompiles on every call; a
 * compiled matcher is 50-90x faster. Patterns are validated on write (contract glob-pattern.ts),
 * so none backtracks badly. Options match the reference: `strictSlashes: false`, dot files not
 * matched by wildcards.
 */
const MAX_CACHED = 5_000;
const cache = new Map<string, (value: string) => boolean>();

export const globMatcher = (pattern: string): ((value: string) => boolean) => {
  let matcher = cache.get(pattern);
  if (!matcher) {
    if (cache.size >= MAX_CACHED) cache.delete(cache.keys().next().value!);
    matcher = picomatch(pattern, { strictSlashes: false });
    cache.set(pattern, matcher);
  }
  return matcher;
};

export const globMatches = (pattern: string, value: string) => globMatcher(pattern)(value);
