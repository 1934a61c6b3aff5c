import { generateOpenApi } from "@ts-rest/open-api";
import { contract } from "./index";

/** The OpenAPI document, derived from the contract so it can never drift from the server. */
export const buildOpenApiDocument = () =>
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
