import { z } from "zod";

/** SCIM 2.0 (RFC 7644) wire pieces: error bodies, list bodies, filters and paging. */
export const SCIM_ERROR_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:Error";
export const SCIM_LIST_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:ListResponse";
export const SCIM_USER_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:User";
export const SCIM_GROUP_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:Group";

export type ScimType = "invalidFilter" | "invalidSyntax" | "invalidValue" | "uniqueness" | "noTarget" | "tooMany";

/** An answer in SCIM's error shape: `{schemas, status, detail, scimType?}` with the same HTTP status. */
export class ScimError extends Error {
  constructor(
    readonly status: number,
    detail: string,
    readonly scimType?: ScimType,
  ) {
    super(detail);
  }

  get body() {
    return {
      schemas: [SCIM_ERROR_SCHEMA],
      status: String(this.status),
      detail: this.message,
      ...(this.scimType ? { scimType: this.scimType } : {}),
    };
  }
}

export const badRequest = (detail: string, scimType: ScimType = "invalidValue") => new ScimError(400, detail, scimType);

/** Parse a body against its schema, or a SCIM 400 naming the first problem. */
export const parseScim = <T>(schema: z.ZodType<T>, value: unknown): T => {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  throw badRequest(`${issue.path.join(".") || "body"}: ${issue.message}`, "invalidSyntax");
};

export type ScimFilter = { attribute: string; value: string };

const FILTER = /^\s*([A-Za-z][\w.]*)\s+eq\s+"((?:[^"\\]|\\.)*)"\s*$/i;

/**
 * Only `<attribute> eq "<value>"` on the attributes each resource allows (compared without regard
 * to case, as SCIM compares attribute names); anything else is a 400 `invalidFilter`.
 */
export const parseFilter = <A extends string>(
  text: unknown,
  allowed: Record<string, A>,
): { attribute: A; value: string } | undefined => {
  if (text === undefined || text === "") return undefined;
  if (typeof text !== "string" || text.length > 512) throw badRequest("The filter is not supported", "invalidFilter");
  const match = FILTER.exec(text);
  const attribute = match ? allowed[match[1]!.toLowerCase()] : undefined;
  if (!match || attribute === undefined) {
    throw badRequest(`The filter is not supported: use ${Object.keys(allowed).join(", ")} with eq`, "invalidFilter");
  }
  return { attribute, value: match[2]!.replace(/\\(.)/g, "$1") };
};

export const MAX_PAGE = 100;

const intParam = (value: unknown, name: string, fallback: number) => {
  if (value === undefined || value === "") return fallback;
  if (typeof value !== "string" || !/^-?\d{1,9}$/.test(value)) throw badRequest(`${name} must be an integer`);
  return Number(value);
};

/** `startIndex` is 1-based (below 1 reads as 1); `count` is at most 100 (negative reads as 0). */
export const pagingOf = (query: Record<string, unknown>) => {
  const startIndex = Math.max(1, intParam(query.startIndex, "startIndex", 1));
  const count = Math.min(MAX_PAGE, Math.max(0, intParam(query.count, "count", 20)));
  return { startIndex, offset: startIndex - 1, limit: count };
};

export const listResponse = <T>(resources: T[], total: number, startIndex: number) => ({
  schemas: [SCIM_LIST_SCHEMA],
  totalResults: total,
  Resources: resources,
  startIndex,
  itemsPerPage: resources.length,
});

/** SCIM booleans arrive as JSON booleans, or (from some providers) as "True"/"False". */
export const scimBoolean = (value: unknown, name: string) => {
  if (typeof value === "boolean") return value;
  if (typeof value === "string" && /^(true|false)$/i.test(value)) return value.toLowerCase() === "true";
  throw badRequest(`${name} must be a boolean`);
};

/** A PATCH request (RFC 7644 §3.5.2): the operations are applied in order. */
export const PatchBody = z.object({
  schemas: z.array(z.string().max(256)).max(10).optional(),
  Operations: z
    .array(
      z.object({
        op: z.string().max(16),
        path: z.string().max(512).optional(),
        value: z.unknown().optional(),
      }),
    )
    .min(1)
    .max(100),
});

export type PatchOperation = { op: "add" | "replace" | "remove"; path?: string; value?: unknown };

export const patchOperationsOf = (body: unknown): PatchOperation[] =>
  parseScim(PatchBody, body).Operations.map((operation) => {
    const op = operation.op.toLowerCase();
    if (op !== "add" && op !== "replace" && op !== "remove") {
      throw badRequest(`Unknown PATCH operation ${operation.op}`, "invalidSyntax");
    }
    return { op, path: operation.path, value: operation.value };
  });
