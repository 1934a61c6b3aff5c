export { buildOpenApiDocument, type OpenApiDocument } from "@keyward/contract/openapi";
