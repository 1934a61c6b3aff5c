import { contract } from "@keyward/contract";
import { isAppRoute, type AppRoute, type AppRouter } from "@ts-rest/core";
import type { ZodTypeAny } from "zod";

/** One operation of the contract (the OpenAPI document is generated from the same routes). */
export type Operation = {
  name: string;
  method: AppRoute["method"];
  path: string;
  pathParamNames: string[];
  pathParams?: ZodTypeAny;
  query?: ZodTypeAny;
  body?: ZodTypeAny;
  isPublic: boolean;
};

const asSchema = (value: unknown) =>
  value && typeof value === "object" && "_def" in value ? (value as ZodTypeAny) : undefined;

const walk = (router: AppRouter, prefix: string[]): Operation[] =>
  Object.entries(router).flatMap(([key, value]): Operation[] => {
    const name = [...prefix, key];
    if (!isAppRoute(value)) return walk(value, name);
    return [
      {
        name: name.join("."),
        method: value.method,
        path: value.path,
        pathParamNames: [...value.path.matchAll(/:(\w+)/g)].map((m) => m[1]!),
        pathParams: asSchema(value.pathParams),
        query: asSchema(value.query),
        body: "body" in value ? asSchema(value.body) : undefined,
        isPublic: (value.metadata as { public?: boolean } | undefined)?.public === true,
      },
    ];
  });

export const operations: Operation[] = walk(contract, []);

/** The path with each parameter replaced by an already-encoded segment. */
export const fillPath = (operation: Operation, encoded: (name: string) => string) =>
  operation.path.replace(/:(\w+)/g, (_match, name: string) => encoded(name));

/** A query object as the wire carries it: repeated keys for arrays, bracketed keys for objects. */
export const toQueryString = (query: unknown): string => {
  if (query === undefined) return "";
  if (query === null || typeof query !== "object" || Array.isArray(query)) {
    return `?${encodeURIComponent(stringify(query))}`;
  }
  const params = new URLSearchParams();
  const add = (key: string, value: unknown) => {
    if (value === undefined) return;
    if (Array.isArray(value)) value.forEach((item) => add(key, item));
    else if (value !== null && typeof value === "object") {
      for (const [k, v] of Object.entries(value)) add(`${key}[${k}]`, v);
    } else params.append(key, stringify(value));
  };
  for (const [key, value] of Object.entries(query)) add(key, value);
  const text = params.toString();
  return text ? `?${text}` : "";
};

const stringify = (value: unknown) =>
  value === null || value === undefined ? "" : typeof value === "string" ? value : JSON.stringify(value);
