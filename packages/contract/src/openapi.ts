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
    { setOperationId: "concatenated-path" },
  );
