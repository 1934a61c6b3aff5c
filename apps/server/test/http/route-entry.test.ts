import { describe, expect, it } from "vitest";
import { contract } from "@keyward/contract";
import { routesOf } from "../../src/app/route-entry";
import { limitOfRoute } from "../../src/app/rate-limit";

describe("route entry plans", () => {
  const routes = routesOf(contract);

  it("names every contract route once", () => {
    expect(new Set(routes.map(([route]) => route)).size).toBe(routes.length);
    expect(new Set(routes.map(([, operation]) => operation)).size).toBe(routes.length);
    expect(routes.map(([, operation]) => operation)).toContain("privileges.v2.get");
  });

  it("rate-limits exactly the routes whose contract declares a 429", () => {
    const mismatched = routes
      .filter(([route]) => (limitOfRoute(route) !== undefined) !== 429 in route.responses)
      .map(([route, operation]) => `${operation} ${route.method} ${route.path}`);
    expect(mismatched).toEqual([]);
    expect(routes.filter(([route]) => limitOfRoute(route)).length).toBeGreaterThan(10);
  });
});
