import type { AppRoute, AppRouter } from "@ts-rest/core";

const isRoute = (value: unknown): value is AppRoute =>
  typeof value === "object" && value !== null && "method" in value && "path" in value;

/** `a.b.c` names of a contract's routes, looked up by the route object ts-rest puts on the request. */
export const routeOperations = (router: AppRouter): ((route: AppRoute) => string | undefined) => {
  const names = new Map<AppRoute, string>();
  const walk = (node: AppRouter, prefix: string) => {
    for (const [key, value] of Object.entries(node)) {
      if (isRoute(value)) names.set(value, `${prefix}${key}`);
      else walk(value, `${prefix}${key}.`);
    }
  };
  walk(router, "");
  return (route) => names.get(route);
};
