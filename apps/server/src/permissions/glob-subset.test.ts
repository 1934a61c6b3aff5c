import { globPatternError, parseGlobPattern, type GlobAtom } from "@keyward/contract";
import fc from "fast-check";
import picomatch from "picomatch";
import { describe, expect, it } from "vitest";
import { isGlobSubsetOfGlob } from "./glob-subset";

const matches = (pattern: string, value: string) => picomatch(pattern, { strictSlashes: false })(value);

describe("isGlobSubsetOfGlob", () => {
  it.each([
    ["/a/b", "/a/*"],
    ["/a/*", "/a/**"],
    ["/a/b/**", "/a/**"],
    ["/a/x*", "/a/*"],
    ["/{a,b}/c", "/*/c"],
    ["/a/[ab]", "/a/*"],
    ["/a/b/c", "/**"],
    ["/a/**/c", "/a/**"],
    ["dev", "{dev,prod}"],
  ])("%j is within %j", (sub, sup) => {
    expect(isGlobSubsetOfGlob(sub, sup)).toBe(true);
  });

  it.each([
    ["/a/**", "/a/*"],
    ["/a/*", "/a/x*"],
    ["**", "/a/**"],
    ["/a/.x", "/a/*"],
    ["/a/.*", "/a/**"],
    ["/b/*", "/a/**"],
    ["!/a/**", "/a/**"],
    ["/a/?", "/a/[ab]"],
    ["/a/[ab]", "/a/?"],
    ["/*b", "/*/**/**"],
    ["/b", "/**/b"],
  ])("%j is not within %j", (sub, sup) => {
    expect(isGlobSubsetOfGlob(sub, sup)).toBe(false);
  });
});

const SEGMENTS = ["a", "b", "ab", ".a", "*", "a*", "*b", "?", "[ab]", "{a,b}", "{a,ab}", "**", "x?", ""];
const glob = fc
  .tuple(fc.boolean(), fc.array(fc.constantFrom(...SEGMENTS), { minLength: 1, maxLength: 4 }))
  .map(([rooted, segments]) => (rooted ? "/" : "") + segments.join("/"))
  .filter((p) => p.length > 0 && globPatternError(p) === undefined);

/** Values the engine is given: names, or folder paths normalised without empty segments. */
const isNormalized = (value: string) => value === "/" || (value.length > 0 && !value.slice(1).split("/").includes(""));
const PATH_SEGMENTS = ["a", "b", "ab", "ba", ".a", "aa", "x", "xb", "[ab]"];
const path = fc
  .tuple(fc.boolean(), fc.array(fc.constantFrom(...PATH_SEGMENTS), { minLength: 0, maxLength: 5 }))
  .map(([rooted, segments]) => (rooted ? "/" : "") + segments.join("/"))
  .filter(isNormalized);

/** Strings built from a pattern's own shape, so matches are common. */
const instancesOf = (pattern: string, seed: number): string[] => {
  let state = seed;
  const pick = <T>(list: readonly T[]): T => list[(state = (state * 1103515245 + 12345) % 2 ** 31) % list.length]!;
  const atom = (a: GlobAtom): string => {
    if (a.kind === "literal") return a.char;
    if (a.kind === "any") return pick(["a", "b", "x", "."]);
    if (a.kind === "star") return pick(["", "a", "ab", "b", ".b"]);
    if (a.kind === "class") return pick(["a", "b", "x", "[ab]"]);
    return pick(a.alternatives).map(atom).join("");
  };
  const parsed = parseGlobPattern(pattern);
  return Array.from({ length: 8 }, () =>
    parsed.segments
      .map((s) => (s.kind === "globstar" ? pick(["", "a", "a/b", ".a", "x/a"]) : s.atoms.map(atom).join("")))
      .join("/"),
  );
};

describe("glob subset agrees with matching", () => {
  it("never claims a subset that picomatch contradicts", () => {
    let exercised = 0;
    fc.assert(
      fc.property(
        glob,
        glob,
        fc.array(path, { maxLength: 12 }),
        fc.integer({ min: 1, max: 2 ** 30 }),
        (sub, sup, paths, seed) => {
          if (!isGlobSubsetOfGlob(sub, sup)) return;
          for (const value of [...paths, ...instancesOf(sub, seed)].filter(isNormalized)) {
            if (!matches(sub, value)) continue;
            if (sub !== sup) exercised++;
            expect(matches(sup, value), `${value} matches ${sub} but not ${sup}`).toBe(true);
          }
        },
      ),
      { numRuns: 3000 },
    );
    // The property must have met real subset pairs, not only refusals.
    expect(exercised).toBeGreaterThan(50);
  });

  it("holds every pattern to be within itself and within its own ancestors", () => {
    fc.assert(
      fc.property(glob, (pattern) => {
        expect(isGlobSubsetOfGlob(pattern, pattern)).toBe(true);
      }),
    );
  });
});
