import { initContract } from "@ts-rest/core";
import { z } from "zod";
import { TimestampSchema, slugSchema } from "./common";
import { PasswordRequirementsSchema } from "./dynamic-secret-providers.schema";
import { EnvironmentSlugInput, ProjectIdInput, SecretPathSchema } from "./folders.contract";
import { SecretNameSchema } from "./secrets.schema";

const c = initContract();

/** The kinds of rotation Keyward runs, each on connections of one app. */
export const SECRET_ROTATION_TYPES = {
  "postgres-credentials": { app: "postgres", name: "PostgreSQL Credentials" },
  "mysql-credentials": { app: "mysql", name: "MySQL Credentials" },
  "redis-credentials": { app: "redis", name: "Redis Credentials" },
  "ldap-password": { app: "ldap", name: "LDAP Password" },
} as const;
export type SecretRotationType = keyof typeof SECRET_ROTATION_TYPES;

const RotateAtUtcSchema = z.object({
  hours: z.number().int().min(0).max(23),
  minutes: z.number().int().min(0).max(59),
});

const UsernameInput = (n: 1 | 2) => z.string().trim().min(1, `Username${n} Required`).max(256);

/** Two existing users of the database that take turns; an optional statement replaces the default ALTER. */
const SqlParametersSchema = z.object({
  username1: UsernameInput(1),
  username2: UsernameInput(2),
  rotationStatement: z.string().trim().max(4_096).optional(),
  passwordRequirements: PasswordRequirementsSchema.optional(),
});
/** Two existing ACL users of the Redis server that take turns. */
const RedisParametersSchema = z.object({
  username1: UsernameInput(1),
  username2: UsernameInput(2),
  passwordRequirements: PasswordRequirementsSchema.optional(),
});
/** One directory entry whose userPassword keeps two values: the new password and the previous one. */
const LdapParametersSchema = z.object({
  dn: z.string().trim().min(1, "DN Required").max(1_024),
  passwordRequirements: PasswordRequirementsSchema.optional(),
});

const UserMappingSchema = z.object({ username: SecretNameSchema, password: SecretNameSchema });
const DnMappingSchema = z.object({ dn: SecretNameSchema, password: SecretNameSchema });

const PARAMETERS = {
  "postgres-credentials": [SqlParametersSchema, UserMappingSchema],
  "mysql-credentials": [SqlParametersSchema, UserMappingSchema],
  "redis-credentials": [RedisParametersSchema, UserMappingSchema],
  "ldap-password": [LdapParametersSchema, DnMappingSchema],
} as const;

export const SecretRotationSchema = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  type: z.string(),
  rotationInterval: z.number().int(),
  isAutoRotationEnabled: z.boolean(),
  activeIndex: z.number().int(),
  projectId: z.string(),
  folderId: z.string(),
  connectionId: z.string(),
  rotationStatus: z.enum(["success", "failed", "pending"]),
  lastRotationJobId: z.string().nullable(),
  lastRotatedAt: TimestampSchema.nullable(),
  lastRotationAttemptedAt: TimestampSchema.nullable(),
  nextRotationAt: TimestampSchema.nullable(),
  isLastRotationManual: z.boolean(),
  lastRotationMessage: z.string().nullable(),
  createdAt: TimestampSchema,
  updatedAt: TimestampSchema,
  parameters: z.record(z.unknown()),
  secretsMapping: z.record(z.string()),
  rotateAtUtc: RotateAtUtcSchema,
  connection: z.object({ app: z.string(), name: z.string(), id: z.string() }),
  environment: z.object({ slug: z.string(), name: z.string(), id: z.string() }),
  folder: z.object({ id: z.string(), path: z.string() }),
});
export type SecretRotation = z.infer<typeof SecretRotationSchema>;

const RotationParams = z.object({ rotationId: z.string().uuid() });
const Wrapped = z.object({ secretRotation: SecretRotationSchema });

const routesOf = <T extends SecretRotationType>(type: T) => {
  const [parameters, secretsMapping] = PARAMETERS[type];
  const base = `/api/v2/secret-rotations/${type}`;
  const name = SECRET_ROTATION_TYPES[type].name;
  return c.router({
    list: {
      method: "GET",
      path: base,
      query: z.object({ projectId: ProjectIdInput }),
      responses: { 200: z.object({ secretRotations: z.array(SecretRotationSchema) }) },
      summary: `List the project's ${name} rotations the caller may read`,
    },
    get: {
      method: "GET",
      path: `${base}/:rotationId`,
      pathParams: RotationParams,
      responses: { 200: Wrapped },
      summary: `One ${name} rotation`,
    },
    getByName: {
      method: "GET",
      path: `${base}/rotation-name/:rotationName`,
      pathParams: z.object({ rotationName: z.string().trim().min(1).max(64) }),
      query: z.object({ projectId: ProjectIdInput, environment: EnvironmentSlugInput, secretPath: SecretPathSchema }),
      responses: { 200: Wrapped },
      summary: `One ${name} rotation by its name in a folder`,
    },
    create: {
      method: "POST",
      path: base,
      body: z.object({
        name: slugSchema({ max: 64, field: "Name" }),
        projectId: ProjectIdInput,
        description: z.string().trim().max(256).nullable().optional(),
        connectionId: z.string().uuid(),
        environment: EnvironmentSlugInput,
        secretPath: SecretPathSchema,
        isAutoRotationEnabled: z.boolean().default(true),
        rotationInterval: z.coerce.number().int().min(1).max(365),
        rotateAtUtc: RotateAtUtcSchema.default({ hours: 0, minutes: 0 }),
        parameters,
        secretsMapping,
      }),
      responses: { 200: Wrapped },
      summary: `Create a ${name} rotation: both credentials get new passwords, the first one fills the mapped secrets`,
    },
    update: {
      method: "PATCH",
      path: `${base}/:rotationId`,
      pathParams: RotationParams,
      body: z.object({
        name: slugSchema({ max: 64, field: "Name" }).optional(),
        description: z.string().trim().max(256).nullable().optional(),
        isAutoRotationEnabled: z.boolean().optional(),
        rotationInterval: z.coerce.number().int().min(1).max(365).optional(),
        rotateAtUtc: RotateAtUtcSchema.optional(),
        parameters: z.object({ passwordRequirements: PasswordRequirementsSchema.optional() }).optional(),
      }),
      responses: { 200: Wrapped },
      summary: `Change a ${name} rotation's name, description, schedule or password requirements`,
    },
    delete: {
      method: "DELETE",
      path: `${base}/:rotationId`,
      pathParams: RotationParams,
      query: z.object({
        deleteSecrets: z.enum(["true", "false"]).default("false"),
        revokeGeneratedCredentials: z.enum(["true", "false"]).default("false"),
      }),
      body: c.noBody(),
      responses: { 200: Wrapped },
      summary: `Delete a ${name} rotation, optionally with its secrets and with both credentials given passwords nobody knows`,
    },
    generatedCredentials: {
      method: "GET",
      path: `${base}/:rotationId/generated-credentials`,
      pathParams: RotationParams,
      responses: {
        200: z.object({
          generatedCredentials: z.array(z.record(z.string())),
          activeIndex: z.number().int(),
          rotationId: z.string(),
          type: z.string(),
        }),
      },
      summary: `The ${name} rotation's two credentials and which one is active`,
    },
    rotate: {
      method: "POST",
      path: `${base}/:rotationId/rotate-secrets`,
      pathParams: RotationParams,
      body: c.noBody(),
      responses: { 200: Wrapped },
      summary: `Rotate now: the inactive credential gets a new password and becomes the active one`,
    },
  });
};

export const secretRotationsContract = c.router({
  postgresCredentials: routesOf("postgres-credentials"),
  mysqlCredentials: routesOf("mysql-credentials"),
  redisCredentials: routesOf("redis-credentials"),
  ldapPassword: routesOf("ldap-password"),
  options: {
    method: "GET",
    path: "/api/v2/secret-rotations/options",
    responses: {
      200: z.object({
        secretRotationOptions: z.array(
          z.object({ name: z.string(), connection: z.string(), type: z.string(), template: z.record(z.unknown()) }),
        ),
      }),
    },
    summary: "The kinds of rotation and what each needs",
  },
  listAll: {
    method: "GET",
    path: "/api/v2/secret-rotations",
    query: z.object({ projectId: ProjectIdInput }),
    responses: { 200: z.object({ secretRotations: z.array(SecretRotationSchema) }) },
    summary: "List the project's rotations of every kind the caller may read",
  },
});
