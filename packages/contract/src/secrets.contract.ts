import { initContract } from "@ts-rest/core";
import { z } from "zod";
import { rateLimited } from "./common";
import { ProjectIdInput } from "./folders.contract";
import { ChangeRequestSchema } from "./secret-approvals.contract";
import {
  MAX_SECRET_NAME_LENGTH,
  SecretByIdSchema,
  SecretListPageSchema,
  SecretListResponseSchema,
  SecretNameSchema,
  SecretRawSchema,
  SecretReadSchema,
  SecretWithHiddenSchema,
  batchCreateFields,
  batchDeleteFields,
  batchUpdateFields,
  createBodyFields,
  deleteBodyFields,
  getQueryFields,
  listPagingFields,
  listQueryFields,
  optionalProject,
  updateBodyFields,
} from "./secrets.schema";

export * from "./secrets.schema";

const c = initContract();

/** Names in paths that address an existing secret: any trimmed text (an impossible name is a 404). */
const SecretNameParam = z.object({ secretName: z.string().trim().min(1).max(MAX_SECRET_NAME_LENGTH) });
const CreateNameParam = z.object({ secretName: SecretNameSchema });
const SecretIdParam = z.object({ secretId: z.string().trim().min(1).max(64) });

const secretBody = z.object({ secret: SecretRawSchema });
const secretWithHidden = z.object({ secret: SecretWithHiddenSchema });
/** A write to a folder a change policy protects: nothing is written, a change request is opened. */
const changeRequestBody = z.object({ approval: ChangeRequestSchema });

/** v3 names the project by `workspaceId` or a slug. */
const v3Get = { workspaceId: optionalProject, workspaceSlug: optionalProject };
const v3Write = { workspaceId: optionalProject, projectSlug: optionalProject };

/** v3: the project by `workspaceId` or slug; the list answers with an ETag and 304 like v4's. */
export const secretsV3Contract = c.router({
  list: {
    method: "GET",
    path: "/api/v3/secrets/raw",
    query: z.object({ ...v3Get, ...listQueryFields }),
    responses: rateLimited({ 200: SecretListResponseSchema, 304: c.noBody() }),
    summary:
      "Secrets of a folder (and, when asked, of its sub-folders and imports); with an ETag, 304 to a matching If-None-Match",
  },
  getById: {
    method: "GET",
    path: "/api/v3/secrets/raw/id/:secretId",
    pathParams: SecretIdParam,
    responses: rateLimited({ 200: z.object({ secret: SecretByIdSchema }) }),
    summary: "Read a secret by id",
  },
  get: {
    method: "GET",
    path: "/api/v3/secrets/raw/:secretName",
    pathParams: SecretNameParam,
    query: z.object({ ...v3Get, secretName: z.string().optional(), ...getQueryFields }),
    responses: rateLimited({ 200: z.object({ secret: SecretReadSchema }) }),
    summary: "Read a secret by name (falling back through imports when asked)",
  },
  create: {
    method: "POST",
    path: "/api/v3/secrets/raw/:secretName",
    pathParams: CreateNameParam,
    body: z.object({ ...v3Write, ...createBodyFields }),
    responses: { 200: z.union([secretBody, changeRequestBody]) },
    summary: "Create a secret",
  },
  update: {
    method: "PATCH",
    path: "/api/v3/secrets/raw/:secretName",
    pathParams: SecretNameParam,
    body: z.object({ ...v3Write, ...updateBodyFields }),
    responses: { 200: z.union([secretWithHidden, changeRequestBody]) },
    summary: "Update a secret's value, comment, tags, metadata or name",
  },
  delete: {
    method: "DELETE",
    path: "/api/v3/secrets/raw/:secretName",
    pathParams: SecretNameParam,
    body: z.object({ ...v3Write, ...deleteBodyFields }),
    responses: { 200: z.union([secretWithHidden, changeRequestBody]) },
    summary: "Delete a secret",
  },
  batchCreate: {
    method: "POST",
    path: "/api/v3/secrets/batch/raw",
    body: z.object({ ...v3Write, ...batchCreateFields }),
    responses: { 200: z.union([z.object({ secrets: z.array(SecretRawSchema) }), changeRequestBody]) },
    summary: "Create up to 1,000 secrets at once (all or nothing)",
  },
  batchUpdate: {
    method: "PATCH",
    path: "/api/v3/secrets/batch/raw",
    body: z.object({ ...v3Write, ...batchUpdateFields }),
    responses: { 200: z.union([z.object({ secrets: z.array(SecretWithHiddenSchema) }), changeRequestBody]) },
    summary: "Update (or upsert) up to 1,000 secrets at once (all or nothing)",
  },
  batchDelete: {
    method: "DELETE",
    path: "/api/v3/secrets/batch/raw",
    body: z.object({ ...v3Write, ...batchDeleteFields }),
    responses: { 200: z.union([z.object({ secrets: z.array(SecretWithHiddenSchema) }), changeRequestBody]) },
    summary: "Delete up to 1,000 secrets at once (all or nothing)",
  },
});

const v4Project = { projectId: ProjectIdInput };

/** v4: `projectId` only; list and get answer with an ETag and 304 to a matching If-None-Match. */
export const secretsV4Contract = c.router({
  list: {
    method: "GET",
    path: "/api/v4/secrets",
    query: z.object({ projectId: optionalProject, ...listQueryFields, ...listPagingFields }),
    responses: rateLimited({ 200: SecretListPageSchema, 304: c.noBody() }),
    summary: "Secrets of a folder (and, when asked, of its sub-folders and imports); optionally one page of them",
  },
  batchCreate: {
    method: "POST",
    path: "/api/v4/secrets/batch",
    body: z.object({ ...v4Project, ...batchCreateFields }),
    responses: { 200: z.union([z.object({ secrets: z.array(SecretRawSchema) }), changeRequestBody]) },
    summary: "Create up to 1,000 secrets at once (all or nothing)",
  },
  batchUpdate: {
    method: "PATCH",
    path: "/api/v4/secrets/batch",
    body: z.object({ ...v4Project, ...batchUpdateFields }),
    responses: { 200: z.union([z.object({ secrets: z.array(SecretWithHiddenSchema) }), changeRequestBody]) },
    summary: "Update (or upsert) up to 1,000 secrets at once (all or nothing)",
  },
  batchDelete: {
    method: "DELETE",
    path: "/api/v4/secrets/batch",
    body: z.object({ ...v4Project, ...batchDeleteFields }),
    responses: { 200: z.union([z.object({ secrets: z.array(SecretWithHiddenSchema) }), changeRequestBody]) },
    summary: "Delete up to 1,000 secrets at once (all or nothing)",
  },
  getById: {
    method: "GET",
    path: "/api/v4/secrets/id/:secretId",
    pathParams: SecretIdParam,
    responses: rateLimited({ 200: z.object({ secret: SecretByIdSchema }) }),
    summary: "Read a secret by id",
  },
  get: {
    method: "GET",
    path: "/api/v4/secrets/:secretName",
    pathParams: SecretNameParam,
    query: z.object({ ...v4Project, ...getQueryFields }),
    responses: rateLimited({ 200: z.object({ secret: SecretReadSchema }), 304: c.noBody() }),
    summary: "Read a secret by name (falling back through imports when asked)",
  },
  create: {
    method: "POST",
    path: "/api/v4/secrets/:secretName",
    pathParams: CreateNameParam,
    body: z.object({ ...v4Project, ...createBodyFields }),
    responses: { 200: z.union([secretBody, changeRequestBody]) },
    summary: "Create a secret",
  },
  update: {
    method: "PATCH",
    path: "/api/v4/secrets/:secretName",
    pathParams: SecretNameParam,
    body: z.object({ ...v4Project, ...updateBodyFields }),
    responses: { 200: z.union([secretWithHidden, changeRequestBody]) },
    summary: "Update a secret's value, comment, tags, metadata or name",
  },
  delete: {
    method: "DELETE",
    path: "/api/v4/secrets/:secretName",
    pathParams: SecretNameParam,
    body: z.object({ ...v4Project, ...deleteBodyFields }),
    responses: { 200: z.union([secretWithHidden, changeRequestBody]) },
    summary: "Delete a secret",
  },
});
