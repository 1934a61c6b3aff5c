import {
  GlobPatternError,
  parseGlobPattern,
  type GlobAtom,
  type GlobSegment,
  type ParsedGlob,
} from "@keyward/contract";
import { globMatches } from "./glob";

/**
 * Is every path matched by `subset` also matched by `superset`? Sound, not complete: `true` is a
 * guarantee, `false` may be a pattern pair too clever to compare. Works segment by segment on the
 * validated dialect: a superset `**` absorbs any run of segments that cannot start with a dot,
 * a superset `*` absorbs any run of atoms within a segment.
 */
export const isGlobSubsetOfGlob = (subset: string, superset: string): boolean => {
  if (subset === superset) return true;
  const sub = parse(subset);
  const sup = parse(superset);
  if (!sub || !sup) return false;
  // A pattern without wildcards names one path: matching decides exactly.
  const literal = literalPath(sub);
  if (literal !== undefined) return globMatches(superset, literal);
  if (sub.negated || sup.negated) return false;
  return coversPath(sub.segments, sup.segments);
};

const parse = (pattern: string): ParsedGlob | undefined => {
  try {
    return parseGlobPattern(pattern);
  } catch (error) {
    if (error instanceof GlobPatternError) return undefined;
    throw error;
  }
};

const literalPath = (glob: ParsedGlob): string | undefined => {
  if (glob.negated) return undefined;
  const parts: string[] = [];
  for (const segment of glob.segments) {
    if (segment.kind !== "atoms") return undefined;
    let part = "";
    for (const atom of segment.atoms) {
      if (atom.kind !== "literal") return undefined;
      part += atom.char;
    }
    parts.push(part);
  }
  return parts.join("/");
};

type Atom = Exclude<GlobAtom, { kind: "braces" }>;
const MAX_EXPANSIONS = 256;

/** Brace groups expanded into plain atom sequences; undefined when there would be too many. */
const expand = (atoms: GlobAtom[]): Atom[][] | undefined => {
  let results: Atom[][] = [[]];
  for (const atom of atoms) {
    if (atom.kind !== "braces") {
      for (const r of results) r.push(atom);
      continue;
    }
    const next: Atom[][] = [];
    for (const r of results) {
      for (const alternative of atom.alternatives) {
        const tails = expand(alternative);
        if (!tails) return undefined;
        for (const tail of tails) next.push([...r, ...tail]);
      }
    }
    if (next.length > MAX_EXPANSIONS) return undefined;
    results = next;
  }
  return results;
};

const DOT = ".".codePointAt(0)!;
const classHas = (atom: Extract<Atom, { kind: "class" }>, code: number) =>
  atom.ranges.some(([low, high]) => low <= code && code <= high) !== atom.negated;

/** Can the first character of this segment be a dot? (Wildcards never match a leading dot.) */
const mayStartWithDot = (atoms: Atom[]) => {
  const first = atoms[0];
  return (
    first !== undefined &&
    ((first.kind === "literal" && first.char === ".") || (first.kind === "class" && classHas(first, DOT)))
  );
};

const onlyStars = (atoms: Atom[]) => atoms.length > 0 && atoms.every((a) => a.kind === "star");

const sameClass = (a: Extract<Atom, { kind: "class" }>, b: Extract<Atom, { kind: "class" }>) =>
  a.negated === b.negated &&
  a.ranges.length === b.ranges.length &&
  a.ranges.every(([l, h], i) => b.ranges[i]![0] === l && b.ranges[i]![1] === h);

/**
 * One sub atom that matches exactly one character, covered by one superset atom. picomatch also
 * lets some bracket expressions match their own text ("[ab]" literally), so a sub class is only
 * covered by the very same class (or by a star, in the caller).
 */
const charCovered = (sub: Atom, sup: Atom): boolean => {
  if (sub.kind === "star") return false;
  if (sub.kind === "class") return sup.kind === "class" && sameClass(sub, sup);
  if (sup.kind === "any") return true;
  if (sup.kind === "literal") return sub.kind === "literal" && sub.char === sup.char;
  if (sup.kind === "class") return sub.kind === "literal" && classHas(sup, sub.char.codePointAt(0)!);
  return false;
};

/** Atom sequences within one segment (no braces): does `sup` match everything `sub` matches? */
const atomsCovered = (sub: Atom[], sup: Atom[]): boolean => {
  if (sub.length === 0 || onlyStars(sub)) {
    // Empty and star-only segments have their own matching quirks; only the same shape covers them.
    return sub.length === 0 ? sup.length === 0 : onlyStars(sup);
  }
  if (mayStartWithDot(sub) && !(sup[0]?.kind === "literal" && sup[0].char === ".")) return false;
  const memo = new Map<number, boolean>();
  const go = (i: number, j: number): boolean => {
    const key = i * (sup.length + 1) + j;
    const known = memo.get(key);
    if (known !== undefined) return known;
    let result: boolean;
    const s = sub[i];
    const p = sup[j];
    if (p === undefined) result = s === undefined;
    else if (p.kind === "star") result = go(i, j + 1) || (s !== undefined && go(i + 1, j));
    else result = s !== undefined && charCovered(s, p) && go(i + 1, j + 1);
    memo.set(key, result);
    return result;
  };
  return go(0, 0);
};

const segmentCovered = (sub: GlobSegment, sup: GlobSegment): boolean => {
  if (sub.kind === "globstar" || sup.kind === "globstar") return sub.kind === sup.kind;
  const subs = expand(sub.atoms);
  const sups = expand(sup.atoms);
  if (!subs || !sups) return false;
  return subs.every((s) => sups.some((p) => atomsCovered(s, p)));
};

/** A superset `**` absorbs a sub segment that can never start with a dot. */
const absorbable = (segment: GlobSegment) => {
  if (segment.kind === "globstar") return true;
  const alternatives = expand(segment.atoms);
  return alternatives !== undefined && alternatives.every((atoms) => !mayStartWithDot(atoms));
};

/**
 * May the superset `**` at `j` match no segment at all? picomatch allows it at the start, and after
 * a non-empty segment, except when it ends the pattern right after a segment ending in `*`
 * ("/a*" then "**" does not match "/ab") or follows the root ("/", "**", "b" does not match "/b").
 */
const mayMatchNothing = (sup: GlobSegment[], j: number) => {
  let k = j - 1;
  while (k >= 0 && sup[k]!.kind === "globstar") k--;
  if (k < 0) return true;
  const previous = sup[k] as Extract<GlobSegment, { kind: "atoms" }>;
  if (previous.atoms.length === 0) return false;
  const endsPattern = sup.slice(j + 1).every((segment) => segment.kind === "globstar");
  return !(endsPattern && previous.atoms[previous.atoms.length - 1]!.kind === "star");
};

/**
 * Segment sequences. Paths are compared in the normalised form the engine is given (no empty
 * segments, no trailing slash): the superset side is read strictly, the subset side liberally.
 */
const coversPath = (sub: GlobSegment[], sup: GlobSegment[]): boolean => {
  const memo = new Map<number, boolean>();
  const go = (i: number, j: number): boolean => {
    const key = i * (sup.length + 1) + j;
    const known = memo.get(key);
    if (known !== undefined) return known;
    let result: boolean;
    const s = sub[i];
    const p = sup[j];
    if (p === undefined) result = s === undefined;
    else if (p.kind === "globstar")
      result = (mayMatchNothing(sup, j) && go(i, j + 1)) || (s !== undefined && absorbable(s) && go(i + 1, j));
    else result = s !== undefined && segmentCovered(s, p) && go(i + 1, j + 1);
    memo.set(key, result);
    return result;
  };
  return go(0, 0);
};
