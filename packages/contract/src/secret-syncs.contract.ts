import { initContract } from "@ts-rest/core";
import { z } from "zod";
import { TimestampSchema, slugSchema } from "./common";
import { EnvironmentSlugInput, ProjectIdInput, SecretPathSchema } from "./folders.contract";

const c = initContract();

/** Where Keyward pushes a folder's secrets, each through connections of one app. */
export const SECRET_SYNC_DESTINATIONS = {
  "aws-secrets-manager": { name: "AWS Secrets Manager", connection: "aws", canImportSecrets: true },
  "aws-parameter-store": { name: "AWS Parameter Store", connection: "aws", canImportSecrets: true },
  github: { name: "GitHub", connection: "github", canImportSecrets: false },
  "gcp-secret-manager": { name: "GCP Secret Manager", connection: "gcp", canImportSecrets: true },
  "azure-key-vault": { name: "Azure Key Vault", connection: "azure-key-vault", canImportSecrets: true },
} as const;
export type SecretSyncDestination = keyof typeof SECRET_SYNC_DESTINATIONS;

const KEY_SCHEMA = /^(?:[a-zA-Z0-9_\-/]|\{\{secretKey\}\}|\{\{environment\}\})*$/;

/**
 * The options every destination shares. `unownedSecrets` is Keyward's own: what a sync may do with a
 * destination secret it did not write — leave it alone (`keep`, the default), take it over when the
 * folder has a secret of that name (`overwrite`), or also delete it when the folder has none
 * (`delete`, a mirror). `initialSyncBehavior` never grants either on its own.
 */
const CommonSyncOptions = {
  initialSyncBehavior: z
    .enum(["overwrite-destination", "import-prioritize-source", "import-prioritize-destination"])
    .default("overwrite-destination"),
  keySchema: z
    .string()
    .trim()
    .max(255)
    .refine(
      (v) => v.split("{{secretKey}}").length === 2,
      "Key schema must include exactly one {{secretKey}} placeholder",
    )
    .refine(
      (v) => KEY_SCHEMA.test(v),
      "Key schema can only contain alphanumeric characters, dashes, underscores, forward slashes, and the {{secretKey}} and {{environment}} placeholders",
    )
    .optional(),
  disableSecretDeletion: z.boolean().default(false),
  unownedSecrets: z.enum(["keep", "overwrite", "delete"]).default("keep"),
};

const AwsRegion = z
  .string()
  .trim()
  .regex(/^[a-z]{2}(-gov|-iso[a-z]*)?-[a-z]+-\d{1,2}$/, "Invalid AWS region");
const KmsKeyId = z
  .string()
  .trim()
  .max(256)
  .regex(/^[a-zA-Z0-9:/_-]+$/, "Invalid KMS key ID")
  .optional();

const SecretsManagerConfig = z
  .object({
    region: AwsRegion,
    mappingBehavior: z.enum(["one-to-one", "many-to-one"]),
    secretName: z
      .string()
      .trim()
      .min(1)
      .max(256)
      .regex(
        /^[a-zA-Z0-9/_+=.@-]+$/,
        "Secret name must contain only alphanumeric characters and the characters /_+=.@-",
      )
      .optional(),
  })
  .refine((d) => d.mappingBehavior === "one-to-one" || d.secretName, {
    message: "Secret name required for Many-to-One mapping behavior",
    path: ["secretName"],
  });

const ParameterStoreConfig = z.object({
  region: AwsRegion,
  path: z
    .string()
    .trim()
    .min(1, "Parameter Store Path required")
    .max(2_048)
    .regex(/^\/([/]|(([\w-]+\/)+))?$/, 'Invalid path - must follow "/example/path/" format'),
});

const GitHubName = z
  .string()
  .trim()
  .min(1)
  .max(100)
  .regex(/^[A-Za-z0-9_.-]+$/, "Invalid name");
const GitHubConfig = z.discriminatedUnion("scope", [
  z.object({ scope: z.literal("repository"), owner: GitHubName, repo: GitHubName }),
  z.object({ scope: z.literal("repository-environment"), owner: GitHubName, repo: GitHubName, env: GitHubName }),
  z.object({
    scope: z.literal("organization"),
    org: GitHubName,
    visibility: z.enum(["all", "private", "selected"]),
    selectedRepositoryIds: z.array(z.number().int().positive()).max(1_000).optional(),
  }),
]);

const GcpConfig = z.object({
  scope: z.literal("global").default("global"),
  projectId: z
    .string()
    .trim()
    .regex(/^[a-z][a-z0-9-]{4,28}[a-z0-9]$/, "Invalid GCP project ID"),
});

const AzureKeyVaultConfig = z.object({
  vaultBaseUrl: z
    .string()
    .trim()
    .url("Vault base URL must be a URL")
    .max(1_024)
    .refine((v) => v.startsWith("https://"), "Vault base URL must use https"),
});

const AwsSyncOptions = z.object({ ...CommonSyncOptions, keyId: KmsKeyId });
const GitHubSyncOptions = z.object(CommonSyncOptions).refine((o) => o.initialSyncBehavior === "overwrite-destination", {
  message: "GitHub does not support importing secrets: initialSyncBehavior must be overwrite-destination",
  path: ["initialSyncBehavior"],
});

const DESTINATION_SCHEMAS = {
  "aws-secrets-manager": { destinationConfig: SecretsManagerConfig, syncOptions: AwsSyncOptions },
  "aws-parameter-store": { destinationConfig: ParameterStoreConfig, syncOptions: AwsSyncOptions },
  github: { destinationConfig: GitHubConfig, syncOptions: GitHubSyncOptions },
  "gcp-secret-manager": { destinationConfig: GcpConfig, syncOptions: z.object(CommonSyncOptions) },
  "azure-key-vault": { destinationConfig: AzureKeyVaultConfig, syncOptions: z.object(CommonSyncOptions) },
} as const;

const JobStatus = z.enum(["pending", "running", "succeeded", "failed"]).nullable();

/** A sync as answered: where from, where to, how, and how its last jobs went; never a value or credential. */
export const SecretSyncSchema = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  destination: z.string(),
  isAutoSyncEnabled: z.boolean(),
  version: z.number().int(),
  destinationConfig: z.record(z.unknown()),
  syncOptions: z.record(z.unknown()),
  projectId: z.string(),
  folderId: z.string().nullable(),
  connectionId: z.string(),
  createdAt: TimestampSchema,
  updatedAt: TimestampSchema,
  syncStatus: JobStatus,
  lastSyncJobId: z.string().nullable(),
  lastSyncMessage: z.string().nullable(),
  lastSyncedAt: TimestampSchema.nullable(),
  importStatus: JobStatus,
  lastImportJobId: z.string().nullable(),
  lastImportMessage: z.string().nullable(),
  lastImportedAt: TimestampSchema.nullable(),
  removeStatus: JobStatus,
  lastRemoveJobId: z.string().nullable(),
  lastRemoveMessage: z.string().nullable(),
  lastRemovedAt: TimestampSchema.nullable(),
  /** When a failed sync is tried again by itself (null when none is scheduled). */
  nextAttemptAt: TimestampSchema.nullable(),
  connection: z.object({ app: z.string(), name: z.string(), id: z.string() }),
  environment: z.object({ slug: z.string(), name: z.string(), id: z.string() }).nullable(),
  folder: z.object({ id: z.string(), path: z.string() }).nullable(),
});
export type SecretSync = z.infer<typeof SecretSyncSchema>;

/** What the next run would do, key by key (destination names, never values). */
export const SecretSyncPlanSchema = z.object({
  create: z.array(z.string()),
  update: z.array(z.string()),
  delete: z.array(z.string()),
  unchanged: z.array(z.string()),
  skipped: z.array(
    z.object({
      key: z.string(),
      reason: z.enum(["exists-unowned", "owned-by-another-sync", "empty-value", "invalid-name"]),
    }),
  ),
});
export type SecretSyncPlan = z.infer<typeof SecretSyncPlanSchema>;

const SyncParams = z.object({ syncId: z.string().uuid() });
const Wrapped = z.object({ secretSync: SecretSyncSchema });
const Description = z.string().trim().max(256, "Description cannot exceed 256 characters").nullable().optional();

const routesOf = <D extends SecretSyncDestination>(destination: D) => {
  const { destinationConfig, syncOptions } = DESTINATION_SCHEMAS[destination];
  const { name } = SECRET_SYNC_DESTINATIONS[destination];
  const base = `/api/v1/secret-syncs/${destination}`;
  const createBody = z.object({
    name: slugSchema({ max: 256, field: "Name" }),
    projectId: ProjectIdInput,
    description: Description,
    connectionId: z.string().uuid(),
    environment: EnvironmentSlugInput,
    secretPath: SecretPathSchema,
    isAutoSyncEnabled: z.boolean().default(true),
    syncOptions,
    destinationConfig,
  });
  return {
    list: {
      method: "GET",
      path: base,
      query: z.object({ projectId: ProjectIdInput }),
      responses: { 200: z.object({ secretSyncs: z.array(SecretSyncSchema) }) },
      summary: `The project's ${name} syncs the caller may read`,
    },
    get: {
      method: "GET",
      path: `${base}/:syncId`,
      pathParams: SyncParams,
      responses: { 200: Wrapped },
      summary: `One ${name} sync`,
    },
    getByName: {
      method: "GET",
      path: `${base}/sync-name/:syncName`,
      pathParams: z.object({ syncName: z.string().trim().min(1).max(256) }),
      query: z.object({ projectId: ProjectIdInput }),
      responses: { 200: Wrapped },
      summary: `One ${name} sync by its name in the project`,
    },
    create: {
      method: "POST",
      path: base,
      body: createBody,
      responses: { 200: Wrapped },
      summary: `Create a ${name} sync; with auto-sync on, the first run is queued at once`,
    },
    planNew: {
      method: "POST",
      path: `${base}/plan`,
      body: createBody,
      responses: { 200: z.object({ plan: SecretSyncPlanSchema }) },
      summary: `What a new ${name} sync's first run would create, update, delete and leave alone; changes nothing`,
    },
    update: {
      method: "PATCH",
      path: `${base}/:syncId`,
      pathParams: SyncParams,
      body: z.object({
        name: slugSchema({ max: 256, field: "Name" }).optional(),
        description: Description,
        connectionId: z.string().uuid().optional(),
        environment: EnvironmentSlugInput.optional(),
        secretPath: SecretPathSchema.optional(),
        isAutoSyncEnabled: z.boolean().optional(),
        syncOptions: syncOptions.optional(),
        destinationConfig: destinationConfig.optional(),
      }),
      responses: { 200: Wrapped },
      summary: `Change a ${name} sync; with auto-sync on, a run is queued`,
    },
    delete: {
      method: "DELETE",
      path: `${base}/:syncId`,
      pathParams: SyncParams,
      query: z.object({ removeSecrets: z.enum(["true", "false"]).default("false") }),
      body: c.noBody(),
      responses: { 200: Wrapped },
      summary: `Delete a ${name} sync; with removeSecrets=true the destination secrets it wrote are removed first (only those)`,
    },
    syncSecrets: {
      method: "POST",
      path: `${base}/:syncId/sync-secrets`,
      pathParams: SyncParams,
      body: c.noBody(),
      responses: { 200: Wrapped },
      summary: `Queue a run of the ${name} sync now`,
    },
    importSecrets: {
      method: "POST",
      path: `${base}/:syncId/import-secrets`,
      pathParams: SyncParams,
      query: z.object({ importBehavior: z.enum(["prioritize-source", "prioritize-destination"]) }),
      body: c.noBody(),
      responses: { 200: Wrapped },
      summary: `Copy the ${name} destination's secrets into the folder (missing keys, or differing values too with prioritize-destination)`,
    },
    removeSecrets: {
      method: "POST",
      path: `${base}/:syncId/remove-secrets`,
      pathParams: SyncParams,
      body: c.noBody(),
      responses: { 200: Wrapped },
      summary: `Remove from ${name} exactly the secrets this sync wrote`,
    },
    checkDestination: {
      method: "POST",
      path: `${base}/check-destination`,
      body: z.object({
        projectId: ProjectIdInput,
        destinationConfig,
        connectionId: z.string().uuid().optional(),
        excludeSyncId: z.string().uuid().optional(),
      }),
      responses: { 200: z.object({ hasDuplicate: z.boolean(), duplicateProjectId: z.string().optional() }) },
      summary: `Whether another sync of the organization already writes to this ${name} place (another project's is not named)`,
    },
    plan: {
      method: "POST",
      path: `${base}/:syncId/plan`,
      pathParams: SyncParams,
      body: c.noBody(),
      responses: { 200: z.object({ plan: SecretSyncPlanSchema }) },
      summary: `What the ${name} sync's next run would create, update, delete and leave alone; changes nothing`,
    },
  } as const;
};

/** A destination's routes; one that cannot show values (GitHub) has no import. */
const destinationRoutes = <D extends SecretSyncDestination>(destination: D) => c.router(routesOf(destination));
const withoutImport = <D extends SecretSyncDestination>(destination: D) => {
  const { importSecrets: _import, ...routes } = routesOf(destination);
  return c.router(routes);
};

export const secretSyncsContract = c.router({
  awsSecretsManager: destinationRoutes("aws-secrets-manager"),
  awsParameterStore: destinationRoutes("aws-parameter-store"),
  github: withoutImport("github"),
  gcpSecretManager: destinationRoutes("gcp-secret-manager"),
  azureKeyVault: destinationRoutes("azure-key-vault"),
  options: {
    method: "GET",
    path: "/api/v1/secret-syncs/options",
    responses: {
      200: z.object({
        secretSyncOptions: z.array(
          z.object({
            name: z.string(),
            connection: z.string(),
            destination: z.string(),
            canImportSecrets: z.boolean(),
          }),
        ),
      }),
    },
    summary: "The destinations Keyward syncs to, the app each connects through, and whether it can import",
  },
  listAll: {
    method: "GET",
    path: "/api/v1/secret-syncs",
    query: z.object({ projectId: ProjectIdInput }),
    responses: { 200: z.object({ secretSyncs: z.array(SecretSyncSchema) }) },
    summary: "The project's syncs of every destination the caller may read",
  },
});

/** The options answer, in name order. */
export const SECRET_SYNC_OPTIONS = Object.entries(SECRET_SYNC_DESTINATIONS)
  .map(([destination, { name, connection, canImportSecrets }]) => ({ name, connection, destination, canImportSecrets }))
  .sort((a, b) => a.name.localeCompare(b.name));
