import type { Request } from "express";
import { ZodError, ZodIssueCode, type ZodIssue } from "zod";

/** A lone UTF-16 surrogate: with the `u` flag a proper pair is one code point and does not match. */
const LONE_SURROGATE = /\p{Cs}/u;
const LONE_SURROGATES = /\p{Cs}/gu;
const MESSAGE = "Must be well-formed Unicode text (it contains a lone surrogate)";
const MAX_ISSUES = 10;

type Path = (string | number)[];

/** True when `text` holds no lone surrogate (PostgreSQL refuses one in jsonb; encoders replace it). */
export const isWellFormedText = (text: string) => !LONE_SURROGATE.test(text);

/** `text` with each lone surrogate replaced by U+FFFD, as a UTF-8 encoder writes it. */
export const toWellFormedText = (text: string) =>
  isWellFormedText(text) ? text : text.replace(LONE_SURROGATES, "\uFFFD");

/** A value waiting to be looked at, with the way to it; paths are spelled out only for what is found. */
type Frame = { value: unknown; key?: string | number; parent?: Frame };

const pathTo = (frame: Frame): Path => {
  const path: Path = [];
  for (let at: Frame | undefined = frame; at?.key !== undefined; at = at.parent) path.unshift(at.key);
  return path;
};

/**
 * Paths of the strings (values or keys) in a parsed JSON value that are not well-formed Unicode.
 * Iterative, so a deeply nested body cannot overflow the stack.
 */
export const illFormedStringPaths = (root: unknown): Path[] => {
  const found: Path[] = [];
  const stack: Frame[] = [{ value: root }];
  while (stack.length > 0 && found.length < MAX_ISSUES) {
    const frame = stack.pop()!;
    const { value } = frame;
    if (typeof value === "string") {
      if (LONE_SURROGATE.test(value)) found.push(pathTo(frame));
    } else if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i -= 1) stack.push({ value: value[i], key: i, parent: frame });
    } else if (value !== null && typeof value === "object") {
      const keys = Object.keys(value);
      for (let i = keys.length - 1; i >= 0; i -= 1) {
        const key = keys[i]!;
        if (LONE_SURROGATE.test(key)) found.push([...pathTo(frame), key]);
        stack.push({ value: (value as Record<string, unknown>)[key], key, parent: frame });
      }
    }
  }
  return found;
};

/**
 * One rule for every route: text that is not well-formed Unicode is refused with 422 before any
 * handler runs (a lone surrogate would otherwise be stored as U+FFFD or break a certificate encoder).
 * Checked after authentication, so 401/403 still come first; the error reports params, body, then
 * query. Undefined when all is well.
 */
export const illFormedStringsError = (req: Pick<Request, "params" | "body" | "query">): ZodError | undefined => {
  const issues: ZodIssue[] = [req.params, req.body, req.query].flatMap((part) =>
    illFormedStringPaths(part).map((path) => ({ code: ZodIssueCode.custom, path, message: MESSAGE })),
  );
  return issues.length > 0 ? new ZodError(issues.slice(0, MAX_ISSUES)) : undefined;
};
