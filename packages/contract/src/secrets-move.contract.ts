import { initContract } from "@ts-rest/core";
import { z } from "zod";
import { rateLimited } from "./common";
import { EnvironmentSlugInput, ProjectIdInput, SecretPathSchema } from "./folders.contract";
import { MAX_SECRETS_PER_BATCH, MAX_SECRET_NAME_LENGTH } from "./secrets.schema";

const c = initContract();

export const MoveSecretsBodySchema = z.object({
  projectId: ProjectIdInput,
  sourceEnvironment: EnvironmentSlugInput,
  sourceSecretPath: SecretPathSchema.default("/"),
  destinationEnvironment: EnvironmentSlugInput,
  destinationSecretPath: SecretPathSchema.default("/"),
  secretIds: z.array(z.string().trim().min(1).max(64)).min(1).max(MAX_SECRETS_PER_BATCH),
  shouldOverwrite: z.boolean().default(false),
});
export type MoveSecretsBody = z.infer<typeof MoveSecretsBodySchema>;

export const MoveSecretsResponseSchema = z.object({
  isSourceUpdated: z.boolean(),
  isDestinationUpdated: z.boolean(),
});

/** A secret in a reference tree: `value` is its stored value, absent when the secret does not exist. */
export type SecretReferenceNode = {
  key: string;
  value?: string;
  environment: string;
  secretPath: string;
  children: SecretReferenceNode[];
};
export const SecretReferenceNodeSchema: z.ZodType<SecretReferenceNode> = z.lazy(() =>
  z.object({
    key: z.string(),
    value: z.string().optional(),
    environment: z.string(),
    secretPath: z.string(),
    children: z.array(SecretReferenceNodeSchema),
  }),
);

/** A secret in a dependency tree: its children are the secrets whose values reference it. */
export type SecretDependencyNode = {
  key: string;
  environment: string;
  secretPath: string;
  children: SecretDependencyNode[];
};
export const SecretDependencyNodeSchema: z.ZodType<SecretDependencyNode> = z.lazy(() =>
  z.object({
    key: z.string(),
    environment: z.string(),
    secretPath: z.string(),
    children: z.array(SecretDependencyNodeSchema),
  }),
);

export const SecretTreeQuerySchema = z.object({
  projectId: ProjectIdInput,
  environment: EnvironmentSlugInput,
  secretPath: SecretPathSchema.default("/"),
});

const SecretNameParam = z.object({ secretName: z.string().trim().min(1).max(MAX_SECRET_NAME_LENGTH) });

/** Composed before the v4 router: `POST /api/v4/secrets/move` must win over `POST /api/v4/secrets/:secretName`. */
export const secretsMoveContract = c.router({
  move: {
    method: "POST",
    path: "/api/v4/secrets/move",
    body: MoveSecretsBodySchema,
    responses: { 200: MoveSecretsResponseSchema },
    summary:
      "Move secrets to another folder or environment of the project in one transaction (references to them follow)",
  },
});

/** Which secrets a secret's value references, and which reference it. */
export const secretReferencesContract = c.router({
  referenceTree: {
    method: "GET",
    path: "/api/v4/secrets/:secretName/secret-reference-tree",
    pathParams: SecretNameParam,
    query: SecretTreeQuerySchema,
    responses: rateLimited({ 200: z.object({ tree: SecretReferenceNodeSchema, value: z.string() }) }),
    summary: "The secrets a secret's value references, recursively (depth ≤ 10), and its expanded value",
  },
  dependencyTree: {
    method: "GET",
    path: "/api/v4/secrets/:secretName/reference-dependency-tree",
    pathParams: SecretNameParam,
    query: SecretTreeQuerySchema,
    responses: rateLimited({ 200: z.object({ tree: SecretDependencyNodeSchema }) }),
    summary: "The secrets whose values reference a secret, recursively (depth ≤ 10), as far as the caller may describe",
  },
});
