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

export const PasswordRequirementsSchema = z
  .object({
    length: z.number().int().min(12).max(250),
    required: z.object({
      lowercase: z.number().int().min(0).max(250),
      uppercase: z.number().int().min(0).max(250),
      digits: z.number().int().min(0).max(250),
      symbols: z.number().int().min(0).max(250),
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
  });

export const SqlDatabaseInputsSchema = z.object({
  client: z.literal("postgres"),
  host,
  port,
  database: z.string().trim().min(1).max(63),
  username: z.string().trim().min(1).max(63),
  password: z.string().max(1024),
  creationStatement: statement,
  revocationStatement: statement,
  renewStatement: statement,
  ca,
  passwordRequirements: PasswordRequirementsSchema.optional(),
});

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

export const DynamicSecretProviderSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("sql-database"), inputs: SqlDatabaseInputsSchema }),
  z.object({ type: z.literal("redis"), inputs: RedisInputsSchema }),
  z.object({ type: z.literal("totp"), inputs: TotpInputsSchema }),
]);
export type DynamicSecretProvider = z.infer<typeof DynamicSecretProviderSchema>;
export type DynamicSecretProviderType = DynamicSecretProvider["type"];
export const DYNAMIC_SECRET_PROVIDER_TYPES = [
  "sql-database",
  "redis",
  "totp",
] as const satisfies readonly DynamicSecretProviderType[];
