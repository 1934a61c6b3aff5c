import type { Request } from "express";
import { ZodError, ZodIssueCode, type ZodIssue } from "zod";

/** A lone UTF-16 surrogate: with the `u` flag a proper pair is one code point and does not match. */
const LONE_SURROGATE = /\p{Cs}/u;
const MESSAGE = "Must be well-formed Unicode text (it contains a lone surrogate)";
const MAX_ISSUES = 10;

type Path = (string | number)[];

/**
 * Paths of the strings (values or keys) in a parsed JSON value that are not well-formed Unicode.
 * Iterative, so a deeply nested body cannot overflow the stack.
 */
export const illFormedStringPaths = (root: unknown): Path[] => {
  const found: Path[] = [];
  const stack: [unknown, Path][] = [[root, []]];
  while (stack.length > 0 && found.length < MAX_ISSUES) {
    const [value, path] = stack.pop()!;
    if (typeof value === "string") {
      if (LONE_SURROGATE.test(value)) found.push(path);
    } else if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i -= 1) stack.push([value[i], [...path, i]]);
    } else if (value !== null && typeof value === "object") {
      for (const [key, child] of Object.entries(value).reverse()) {
        if (LONE_SURROGATE.test(key)) found.push([...path, key]);
        stack.push([child, [...path, key]]);
      }
    }
  }
  return found;
};

/** Whether any string (value or key) in a parsed JSON value is ill-formed; allocates only for containers. */
const anyIllFormed = (root: unknown): boolean => {
  if (typeof root === "string") return LONE_SURROGATE.test(root);
  if (root === null || typeof root !== "object") return false;
  const stack: object[] = [root];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (Array.isArray(node)) {
      for (const child of node as unknown[]) {
        if (typeof child === "string") {
          if (LONE_SURROGATE.test(child)) return true;
        } else if (child !== null && typeof child === "object") stack.push(child);
      }
      continue;
    }
    for (const key in node) {
      if (!Object.prototype.hasOwnProperty.call(node, key)) continue;
      if (LONE_SURROGATE.test(key)) return true;
      const child = (node as Record<string, unknown>)[key];
      if (typeof child === "string") {
        if (LONE_SURROGATE.test(child)) return true;
      } else if (child !== null && typeof child === "object") stack.push(child);
    }
  }
  return false;
};

/**
 * One rule for every route: text that is not well-formed Unicode is refused with 422 before any
 * handler runs (a lone surrogate would otherwise be stored as U+FFFD or break a certificate encoder).
 * Checked after authentication, so 401/403 still come first; the error reports params, body, then
 * query. Undefined when all is well (the common case costs one walk and no path bookkeeping).
 */
export const illFormedStringsError = (req: Pick<Request, "params" | "body" | "query">): ZodError | undefined => {
  if (!anyIllFormed(req.params) && !anyIllFormed(req.body) && !anyIllFormed(req.query)) return undefined;
  const issues: ZodIssue[] = [req.params, req.body, req.query].flatMap((part) =>
    illFormedStringPaths(part).map((path) => ({ code: ZodIssueCode.custom, path, message: MESSAGE })),
  );
  return new ZodError(issues.slice(0, MAX_ISSUES));
};
