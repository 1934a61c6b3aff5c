import { GlobPatternError, KEY_GLOB_CHARS, PATH_GLOB_CHARS, parseGlobPattern, type GlobAtom } from "@keyward/contract";
import { BadRequestError } from "../../../errors";
import { globMatcher } from "../../../permissions";

/**
 * How a key query reaches SQL: `like` is an ILIKE pattern (a substring, or a glob of only `*` and
 * `?`), `regex` an anchored case-insensitive POSIX expression for the other globs. Both are exact:
 * nothing is filtered again after the query.
 */
export type KeyFilter = { kind: "like" | "regex"; pattern: string; negated: boolean };

const escapeLike = (text: string) => text.replace(/[\\%_]/g, (ch) => `\\${ch}`);

/** Every character but letters, digits and `_` as a code-point escape: nothing in it is an operator. */
const regexChar = (codePoint: number) => {
  const ch = String.fromCodePoint(codePoint);
  if (/^[A-Za-z0-9_]$/.test(ch)) return ch;
  const hex = codePoint.toString(16);
  return codePoint <= 0xffff ? `\\u${hex.padStart(4, "0")}` : `\\U${hex.padStart(8, "0")}`;
};

const regexOfAtoms = (atoms: readonly GlobAtom[]): string =>
  atoms
    .map((atom) => {
      switch (atom.kind) {
        case "literal":
          return regexChar(atom.char.codePointAt(0)!);
        case "any":
          return ".";
        case "star":
          return ".*";
        case "class": {
          const ranges = atom.ranges.map(([low, high]) =>
            low === high ? regexChar(low) : `${regexChar(low)}-${regexChar(high)}`,
          );
          return `[${atom.negated ? "^" : ""}${ranges.join("")}]`;
        }
        case "braces":
          return `(?:${atom.alternatives.map(regexOfAtoms).join("|")})`;
      }
    })
    .join("");

const likeOfAtoms = (atoms: readonly GlobAtom[]) =>
  atoms
    .map((a) => (a.kind === "star" ? "%" : a.kind === "any" ? "_" : escapeLike((a as { char: string }).char)))
    .join("");

/** A key query as SQL: a substring unless it holds a glob character; a bad glob is a 400. */
export const keyFilterOf = (query: string): KeyFilter => {
  if (!KEY_GLOB_CHARS.test(query)) return { kind: "like", pattern: `%${escapeLike(query)}%`, negated: false };
  if (query.includes("/")) throw new BadRequestError("Key pattern must not contain '/'");
  let parsed;
  try {
    parsed = parseGlobPattern(query);
  } catch (error) {
    if (error instanceof GlobPatternError) throw new BadRequestError(`Key pattern: ${error.message}`);
    throw error;
  }
  const segment = parsed.segments[0]!;
  const atoms: GlobAtom[] = segment.kind === "globstar" ? [{ kind: "star" }] : segment.atoms;
  if (atoms.every((a) => a.kind === "literal" || a.kind === "star" || a.kind === "any"))
    return { kind: "like", pattern: likeOfAtoms(atoms), negated: parsed.negated };
  return { kind: "regex", pattern: `^${regexOfAtoms(atoms)}$`, negated: parsed.negated };
};

const normalizePath = (path: string) =>
  `/${path
    .split("/")
    .filter((segment) => segment.length > 0)
    .join("/")}`;

/**
 * A path query as a test on folder paths: a prefix by whole segments (`/app` covers `/app/x` but not
 * `/apple`), or a glob with the permission conditions' dialect and matcher.
 */
export const pathFilterOf = (query: string): ((path: string) => boolean) => {
  if (!PATH_GLOB_CHARS.test(query)) {
    const prefix = normalizePath(query);
    if (prefix === "/") return () => true;
    return (path) => path === prefix || path.startsWith(`${prefix}/`);
  }
  try {
    parseGlobPattern(query);
  } catch (error) {
    if (error instanceof GlobPatternError) throw new BadRequestError(`Path pattern: ${error.message}`);
    throw error;
  }
  return globMatcher(query);
};

/** Where a page ended: the last key and folder looked at, opaque to clients. */
export type SearchCursor = { key: string; folderId: string };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export const encodeCursor = (cursor: SearchCursor) =>
  Buffer.from(JSON.stringify([cursor.key, cursor.folderId])).toString("base64url");

export const decodeCursor = (text: string): SearchCursor => {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(text, "base64url").toString("utf8"));
  } catch {
    parsed = undefined;
  }
  if (
    !Array.isArray(parsed) ||
    parsed.length !== 2 ||
    typeof parsed[0] !== "string" ||
    typeof parsed[1] !== "string" ||
    !UUID.test(parsed[1]) ||
    parsed[0].includes("\u0000")
  )
    throw new BadRequestError("Invalid cursor");
  return { key: parsed[0], folderId: parsed[1] };
};
