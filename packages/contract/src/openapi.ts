import { generateOpenApi } from "@ts-rest/open-api";
import { contract } from "./index";

/**
 * The document's shape as far as consumers read it. Declared here, not taken from ts-rest, whose
 * return type names the `openapi3-ts` typings: published declaration files would then import a
 * package the client does not depend on.
 */
export type OpenApiDocument = {
  openapi: string;
  info: { title: string; version: string; description?: string };
  paths: Record<string, Record<string, unknown>>;
  components?: Record<string, unknown>;
  security?: Record<string, string[]>[];
  tags?: { name: string; description?: string }[];
};

/** 429 and 503 ask the client to come back later; the contract has no place for headers, so say it here. */
const RETRY_AFTER = {
  "Retry-After": { description: "Seconds to wait before retrying", schema: { type: "integer", minimum: 1 } },
};

type Operation = { responses?: Record<string, Record<string, unknown>> };

const withRetryAfter = <T extends Operation>(operation: T): T => {
  const responses = { ...operation.responses };
  for (const status of ["429", "503"]) {
    const response = responses[status];
    if (response) responses[status] = { ...response, headers: { ...RETRY_AFTER } };
  }
  return { ...operation, responses };
};

/** The OpenAPI document, derived from the contract so it can never drift from the server. */
export const buildOpenApiDocument = (): OpenApiDocument =>
  generateOpenApi(
    contract,
    {
      info: {
        title: "Keyward",
        version: "0.0.1",
        description: "Access management for machine identities: privileges, auth methods, tokens, leases and more.",
      },
      components: { securitySchemes: { bearer: { type: "http", scheme: "bearer" } } },
      security: [{ bearer: [] }],
    },
    { setOperationId: "concatenated-path", operationMapper: withRetryAfter },
  );
