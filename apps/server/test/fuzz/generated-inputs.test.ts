import { buildOpenApiDocument } from "@keyward/client/openapi";
import { describe, expect, it } from "vitest";
import { operations } from "./operations";
import { generatedRequests } from "./requests";
import { fuzzEveryOperation } from "./run-cases";

describe("every operation answers generated hostile inputs without a server error", () => {
  it("covers every operation of the OpenAPI document", () => {
    const paths = buildOpenApiDocument().paths;
    const documented = Object.entries(paths).flatMap(([path, methods]) =>
      Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`),
    );
    const fuzzed = operations.map((op) => `${op.method} ${op.path.replace(/:(\w+)/g, "{$1}")}`);
    expect(new Set(fuzzed)).toEqual(new Set(documented));
  });

  fuzzEveryOperation("generated inputs", generatedRequests);
});
