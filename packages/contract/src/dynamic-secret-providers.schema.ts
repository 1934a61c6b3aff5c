import { z } from "zod";

/**
 * Provider inputs of a dynamic secret, by `provider.type`. Statements are templates over
 * `{{username}}`, `{{password}}`, `{{expiration}}` (and `{{database}}` for SQL); left out or
 * empty, a default applies (a PostgreSQL role VALID UNTIL the lease's expiry, a Redis ACL user).
 */
const host = z.string().trim().toLowerCase().min(1).max(255);
const port = z.number().int().min(1).max(65535);
const statement = z.string().trim().max(10_000).optional();
const ca = z.string().max(20_000).optional();

/** Characters that can never break out of a quoted SQL literal or a Redis argument. */
const SAFE_SYMBOLS = /^[-_.~!*@#%^&+=:,?]*$/;

/** Shortest generated password Keyward accepts (the reference allows 1; anything under 12 is guessable). */
export const MIN_GENERATED_PASSWORD_LENGTH = 12;

const classCount = z.number().int().min(0).max(250);

/**
 * The backend's `required: {lowercase, uppercase, digits, symbols}` or the SDK's
 * `required: {minLowercase, minUppercase, minDigits, minSymbols}` (each optional, absent is 0),
 * stored in the backend's shape.
 */
const sdkRequired = (value: unknown) => {
  if (typeof value !== "object" || value === null) return value;
  const required = (value as { required?: unknown }).required;
  if (typeof required !== "object" || required === null) return value;
  const r = required as Record<string, unknown>;
  if (!["minLowercase", "minUppercase", "minDigits", "minSymbols"].some((key) => key in r)) return value;
  return {
    ...value,
    required: {
      lowercase: r.lowercase ?? r.minLowercase ?? 0,
      uppercase: r.uppercase ?? r.minUppercase ?? 0,
      digits: r.digits ?? r.minDigits ?? 0,
      symbols: r.symbols ?? r.minSymbols ?? 0,
    },
  };
};

export const PasswordRequirementsSchema = z.preprocess(
  sdkRequired,
  z
    .object({
      length: z
        .number()
        .int()
        .min(MIN_GENERATED_PASSWORD_LENGTH, `Password length must be at least ${MIN_GENERATED_PASSWORD_LENGTH}`)
        .max(250, "Password length must be at most 250"),
      required: z.object({
        lowercase: classCount,
        uppercase: classCount,
        digits: classCount,
        symbols: classCount,
      }),
      allowedSymbols: z
        .string()
        .max(32)
        .regex(SAFE_SYMBOLS, "allowedSymbols may only contain -_.~!*@#%^&+=:,?")
        .optional(),
    })
    .refine((r) => r.required.lowercase + r.required.uppercase + r.required.digits + r.required.symbols <= r.length, {
      message: "The required characters exceed the password length",
    })
    .refine((r) => r.required.lowercase + r.required.uppercase + r.required.digits + r.required.symbols > 0, {
      message: "At least one character class must be required",
    }),
);

const sqlFields = {
  host,
  port,
  password: z.string().max(1024),
  creationStatement: statement,
  revocationStatement: statement,
  renewStatement: statement,
  ca,
  passwordRequirements: PasswordRequirementsSchema.optional(),
};

export const PostgresInputsSchema = z.object({
  client: z.literal("postgres"),
  ...sqlFields,
  database: z.string().trim().min(1).max(63),
  username: z.string().trim().min(1).max(63),
});

/** MariaDB or MySQL (the reference's `mysql2` client). */
export const MysqlInputsSchema = z.object({
  client: z.literal("mysql2"),
  ...sqlFields,
  database: z.string().trim().min(1).max(64),
  username: z.string().trim().min(1).max(80),
});

export const SUPPORTED_SQL_CLIENTS = ["postgres", "mysql2"] as const;
/** SQL clients of the reference that Keyward does not drive: accepted by the schema, refused with a 400. */
export const UNSUPPORTED_SQL_CLIENTS = ["oracledb", "mssql", "sap-ase"] as const;

export const SqlDatabaseInputsSchema = z.discriminatedUnion("client", [
  PostgresInputsSchema,
  MysqlInputsSchema,
  z.object({ client: z.enum(UNSUPPORTED_SQL_CLIENTS) }).passthrough(),
]);

export const RedisInputsSchema = z.object({
  host,
  port,
  username: z.string().trim().min(1).max(255).default("default"),
  password: z.string().max(1024).optional(),
  creationStatement: statement,
  revocationStatement: statement,
  renewStatement: statement,
  ca,
});

const base32Secret = z
  .string()
  .trim()
  .min(1)
  .max(512)
  .transform((v) => v.replace(/\s+/g, "").toUpperCase())
  .refine((v) => /^[A-Z2-7]+=*$/.test(v), "The secret must be base32");

export const TotpInputsSchema = z.discriminatedUnion("configType", [
  z.object({
    configType: z.literal("url"),
    url: z
      .string()
      .trim()
      .max(2048)
      .url()
      .refine(
        (v) => Boolean(URL.canParse(v) && new URL(v).searchParams.get("secret")),
        "OTP URL must contain secret field",
      ),
  }),
  z.object({
    configType: z.literal("manual"),
    secret: base32Secret,
    period: z.number().int().min(1).max(3600).optional(),
    algorithm: z.enum(["sha1", "sha256", "sha512"]).optional(),
    digits: z.number().int().min(6).max(10).optional(),
  }),
]);

/** RabbitMQ through its management HTTP API; `host` may carry the scheme (`https://mq.example.com`). */
export const RabbitMqInputsSchema = z.object({
  host: z.string().trim().toLowerCase().min(1).max(300),
  port,
  tags: z
    .array(
      z
        .string()
        .trim()
        .min(1)
        .max(64)
        .regex(/^[A-Za-z0-9_-]+$/, "Tags are letters, digits, - and _"),
    )
    .max(16)
    .default([]),
  username: z.string().trim().min(1).max(255),
  password: z.string().max(1024),
  ca,
  virtualHost: z.object({
    name: z.string().trim().min(1).max(255),
    permissions: z.object({
      read: z.string().max(1024),
      write: z.string().max(1024),
      configure: z.string().max(1024),
    }),
  }),
});

const ldif = z.string().min(1).max(20_000);
const ldapConnection = {
  url: z
    .string()
    .trim()
    .min(1)
    .max(2048)
    .regex(/^ldaps?:\/\//i, "The URL must start with ldap:// or ldaps://"),
  binddn: z.string().trim().min(1).max(1024),
  bindpass: z.string().trim().min(1).max(1024),
  ca,
};

/**
 * `dynamic`: entries made from `creationLdif` per lease and removed with `revocationLdif`.
 * `static`: an existing entry whose password `rotationLdif` sets per lease and again on revocation.
 * Templates use {{Username}}, {{Password}} and {{EncodedPassword}} (Active Directory's unicodePwd).
 */
export const LdapInputsSchema = z.preprocess(
  (value) =>
    typeof value === "object" && value !== null && (value as { credentialType?: unknown }).credentialType === undefined
      ? { ...value, credentialType: "dynamic" }
      : value,
  z.discriminatedUnion("credentialType", [
    z.object({
      ...ldapConnection,
      credentialType: z.literal("dynamic"),
      creationLdif: ldif,
      revocationLdif: ldif,
      rollbackLdif: ldif.optional(),
    }),
    z.object({ ...ldapConnection, credentialType: z.literal("static"), rotationLdif: ldif }),
  ]),
);

/** Provider types of the reference that Keyward does not offer: accepted by the schema, refused with a 400. */
export const UNSUPPORTED_PROVIDER_TYPES = [
  "cassandra",
  "aws-iam",
  "aws-elasticache",
  "aws-memorydb",
  "mongo-db-atlas",
  "elastic-search",
  "mongo-db",
  "azure-entra-id",
  "azure-sql-database",
  "sap-hana",
  "snowflake",
  "sap-ase",
  "kubernetes",
  "vertica",
  "gcp-iam",
  "github",
  "couchbase",
  "clickhouse",
  "milvus",
  "ssh",
  "ibm-api-connect",
  "tailscale",
] as const;

export const DynamicSecretProviderSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("sql-database"), inputs: SqlDatabaseInputsSchema }),
  z.object({ type: z.literal("redis"), inputs: RedisInputsSchema }),
  z.object({ type: z.literal("rabbit-mq"), inputs: RabbitMqInputsSchema }),
  z.object({ type: z.literal("ldap"), inputs: LdapInputsSchema }),
  z.object({ type: z.literal("totp"), inputs: TotpInputsSchema }),
  z.object({ type: z.enum(UNSUPPORTED_PROVIDER_TYPES), inputs: z.unknown() }),
]);
export type DynamicSecretProvider = z.infer<typeof DynamicSecretProviderSchema>;
export const DYNAMIC_SECRET_PROVIDER_TYPES = ["sql-database", "redis", "rabbit-mq", "ldap", "totp"] as const;
export type DynamicSecretProviderType = (typeof DYNAMIC_SECRET_PROVIDER_TYPES)[number];
