/**
 * The `$glob` dialect Keyward accepts: picomatch syntax without extglobs or regex groups, with a
 * bounded length and few unbounded wildcards per path segment. picomatch compiles globs to
 * backtracking regular expressions; three `*` in one segment (or brace groups of uneven width) or
 * three `**` in one pattern already cost milliseconds on a 512-character path, so such patterns
 * are refused when written. The costs also multiply across segments: a globstar, then a segment
 * `*a*`, then a segment `*a*b` takes ~40 ms, and the two segments alone ~3 ms, although no segment
 * has more than two wildcards. Measured over every pattern of
 * up to five segments, at most four variable-width parts in the whole pattern (each `**` counting
 * one) with at most one segment holding two stays under 0.4 ms on any 512-character path.
 */
export const MAX_GLOB_LENGTH = 256;
export const MAX_SEGMENT_WILDCARDS = 2;
export const MAX_PATTERN_WILDCARDS = 4;
export const MAX_GLOBSTARS = 2;
export const MAX_BRACE_GROUPS = 4;
export const MAX_BRACE_ALTERNATIVES = 16;

/** One character position of a glob; `class` ranges are inclusive code-point pairs. */
export type GlobAtom =
  | { kind: "literal"; char: string }
  | { kind: "any" }
  | { kind: "star" }
  | { kind: "class"; negated: boolean; ranges: [number, number][] }
  | { kind: "braces"; alternatives: GlobAtom[][] };

/** A segment is the text between slashes; `globstar` is a segment made only of `**`. */
export type GlobSegment = { kind: "globstar" } | { kind: "atoms"; atoms: GlobAtom[] };

export type ParsedGlob = { negated: boolean; segments: GlobSegment[] };

export class GlobPatternError extends Error {}

const fail = (message: string): never => {
  throw new GlobPatternError(message);
};

const INVALID = "Invalid glob pattern";

/** Parse a bracket expression starting after `[`; returns the class and the index after `]`. */
const parseClass = (pattern: string, start: number): [GlobAtom, number] => {
  let i = start;
  let negated = false;
  if (pattern[i] === "!" || pattern[i] === "^") {
    negated = true;
    i++;
  }
  const ranges: [number, number][] = [];
  const readChar = (): number => {
    const ch = pattern[i];
    if (ch === undefined) return fail(INVALID);
    if (ch === "\\") {
      const next = pattern[i + 1];
      if (next === undefined || /[A-Za-z0-9]/.test(next)) return fail(INVALID);
      i += 2;
      return next.codePointAt(0)!;
    }
    if (ch === "[" && pattern[i + 1] === ":") return fail(INVALID);
    i += 1;
    return ch.codePointAt(0)!;
  };
  let first = true;
  while (pattern[i] !== "]" || first) {
    if (pattern[i] === undefined) return fail(INVALID);
    first = false;
    const low = readChar();
    if (pattern[i] === "-" && pattern[i + 1] !== undefined && pattern[i + 1] !== "]") {
      i++;
      const high = readChar();
      if (high < low) return fail(INVALID);
      ranges.push([low, high]);
    } else ranges.push([low, low]);
  }
  return [{ kind: "class", negated, ranges }, i + 1];
};

/** Atoms up to a stop character (`/` at top level; `,` or `}` inside braces). */
const parseAtoms = (pattern: string, start: number, inBraces: boolean): [GlobAtom[], number] => {
  const atoms: GlobAtom[] = [];
  let i = start;
  while (i < pattern.length) {
    const ch = pattern[i]!;
    if (ch === "/") {
      if (inBraces) return fail("Glob pattern braces must not contain '/'");
      break;
    }
    if (inBraces && (ch === "," || ch === "}")) break;
    if (ch === "(" || ch === ")" || ch === "|") return fail("Glob pattern must not use extglobs or regex groups");
    if (ch === "\\") {
      const next = pattern[i + 1];
      if (next === undefined || /[A-Za-z0-9]/.test(next)) return fail(INVALID);
      atoms.push({ kind: "literal", char: next });
      i += 2;
    } else if (ch === "*") {
      while (pattern[i] === "*") i++;
      atoms.push({ kind: "star" });
    } else if (ch === "?") {
      atoms.push({ kind: "any" });
      i++;
    } else if (ch === "[") {
      const [atom, next] = parseClass(pattern, i + 1);
      atoms.push(atom);
      i = next;
    } else if (ch === "{") {
      if (inBraces) return fail("Glob pattern braces must not be nested");
      const alternatives: GlobAtom[][] = [];
      i++;
      for (;;) {
        const [alternative, next] = parseAtoms(pattern, i, true);
        alternatives.push(alternative);
        if (pattern[next] === "}") {
          i = next + 1;
          break;
        }
        if (pattern[next] !== ",") return fail(INVALID);
        i = next + 1;
      }
      if (alternatives.length < 2 || alternatives.length > MAX_BRACE_ALTERNATIVES) {
        return fail(`Glob pattern braces need 2 to ${MAX_BRACE_ALTERNATIVES} alternatives`);
      }
      atoms.push({ kind: "braces", alternatives });
    } else if (ch === "}" || ch === "]") {
      return fail(INVALID);
    } else {
      atoms.push({ kind: "literal", char: ch });
      i++;
    }
  }
  return [atoms, i];
};

const starsIn = (atoms: GlobAtom[]): number =>
  atoms.reduce(
    (n, a) =>
      n + (a.kind === "star" ? 1 : a.kind === "braces" ? a.alternatives.reduce((m, alt) => m + starsIn(alt), 0) : 0),
    0,
  );

/**
 * Variable-width parts of a segment: each `*`, and each brace group whose alternatives differ in
 * width (it backtracks like a wildcard), plus the wildcards inside it.
 */
const segmentWeight = (atoms: GlobAtom[]) =>
  atoms.reduce((n, a) => {
    if (a.kind === "star") return n + 1;
    if (a.kind === "braces") {
      const inner = starsIn([a]);
      const widths = new Set(a.alternatives.map((alt) => alt.length));
      return n + inner + (inner > 0 || widths.size > 1 ? 1 : 0);
    }
    return n;
  }, 0);

/** Parse and check a pattern; throws GlobPatternError with the message a client sees. */
export const parseGlobPattern = (pattern: string): ParsedGlob => {
  if (pattern.length === 0) fail(INVALID);
  if (pattern.length > MAX_GLOB_LENGTH) fail(`Glob pattern must be at most ${MAX_GLOB_LENGTH} characters`);
  let body = pattern;
  let negated = false;
  if (body.startsWith("!")) {
    if (body.startsWith("!!") || body.length === 1) fail(INVALID);
    negated = true;
    body = body.slice(1);
  }
  const segments: GlobSegment[] = [];
  let braceGroups = 0;
  let wildcards = 0;
  let heavySegments = 0;
  let i = 0;
  for (;;) {
    const [atoms, next] = parseAtoms(body, i, false);
    const raw = body.slice(i, next);
    if (raw.length >= 2 && /^\*+$/.test(raw)) {
      segments.push({ kind: "globstar" });
      wildcards += 1;
    } else {
      const weight = segmentWeight(atoms);
      if (weight > MAX_SEGMENT_WILDCARDS) {
        fail(`Glob pattern may use at most ${MAX_SEGMENT_WILDCARDS} wildcards in one path segment`);
      }
      wildcards += weight;
      if (weight >= 2) heavySegments += 1;
      braceGroups += atoms.filter((a) => a.kind === "braces").length;
      segments.push({ kind: "atoms", atoms });
    }
    if (next >= body.length) break;
    i = next + 1;
  }
  if (segments.filter((s) => s.kind === "globstar").length > MAX_GLOBSTARS) {
    fail(`Glob pattern may use at most ${MAX_GLOBSTARS} globstars (**)`);
  }
  if (braceGroups > MAX_BRACE_GROUPS) fail(`Glob pattern may use at most ${MAX_BRACE_GROUPS} brace groups`);
  if (heavySegments > 1) fail("Glob pattern may use two wildcards in at most one path segment");
  if (wildcards > MAX_PATTERN_WILDCARDS)
    fail(`Glob pattern may use at most ${MAX_PATTERN_WILDCARDS} wildcards (each * and ** counts)`);
  return { negated, segments };
};

/** The message for a pattern Keyward refuses, or undefined when it is accepted. */
export const globPatternError = (pattern: string): string | undefined => {
  try {
    parseGlobPattern(pattern);
    return undefined;
  } catch (error) {
    if (error instanceof GlobPatternError) return error.message;
    throw error;
  }
};
