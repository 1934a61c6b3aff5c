export { buildOpenApiDocument } from "@keyward/contract/openapi";
