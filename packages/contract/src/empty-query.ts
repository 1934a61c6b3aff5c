import type { AppRoute } from "@ts-rest/core";
import type { ZodTypeAny } from "zod";

/** The object schema under refinements and transforms, if there is one. */
const objectShape = (schema: unknown): Record<string, ZodTypeAny> | undefined => {
  let at = schema as { shape?: unknown; _def?: { schema?: unknown; innerType?: unknown } } | null | undefined;
  while (at && at.shape === undefined && (at._def?.schema || at._def?.innerType))
    at = (at._def.schema ?? at._def.innerType) as typeof at;
  return at && typeof at.shape === "object" ? (at.shape as Record<string, ZodTypeAny>) : undefined;
};

/** The query keys of a route that may be left out (optional or defaulted). */
export const optionalQueryKeys = (route: AppRoute): string[] => {
  const shape = objectShape(route.query);
  if (!shape) return [];
  return Object.entries(shape)
    .filter(([, schema]) => schema.isOptional())
    .map(([key]) => key);
};

/**
 * An optional query parameter sent empty (`?workspaceSlug=&…`, as clients that fill every field of
 * a struct send it) means the parameter was not sent. Returns, for one route, the step that drops
 * such parameters from a parsed query before it is validated; undefined when the route has none.
 */
export const emptyOptionalQueryDropper = (route: AppRoute) => {
  const keys = optionalQueryKeys(route);
  if (keys.length === 0) return undefined;
  return (query: Record<string, unknown>) => {
    for (const key of keys) if (query[key] === "") delete query[key];
  };
};
