import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { parse } from "yaml";
import { z } from "zod";
import { CliError } from "../config";
import { parentEnvironment } from "../env";
import { parseDuration } from "./duration";

const duration = (fallbackMs: number) =>
  z
    .union([z.string(), z.number()])
    .optional()
    .transform((value, ctx) => {
      if (value === undefined) return fallbackMs;
      const ms = parseDuration(value);
      if (ms === undefined) {
        ctx.addIssue({ code: z.ZodIssueCode.custom, message: `not a duration: ${String(value)} (e.g. 30s, 5m, 1h)` });
        return z.NEVER;
      }
      return ms;
    });

const text = z.string().trim().min(1);

/**
 * Infisical's agent reads every credential key (`client-id`, `client-secret`, `identity-id`, …) as
 * the path of a file holding the value; Keyward does the same, and takes the value itself under the
 * key's name with `-value` appended.
 */
const identityFields = { "identity-id": text.optional(), "identity-id-value": text.optional() };
const needsIdentity = (c: { "identity-id"?: string; "identity-id-value"?: string }) =>
  c["identity-id"] !== undefined || c["identity-id-value"] !== undefined;
const IDENTITY_MESSAGE = "give identity-id (the path of a file holding the identity's id) or identity-id-value";

const UniversalAuth = z.object({
  type: z.literal("universal-auth"),
  config: z
    .object({
      "client-id": text.optional(),
      "client-secret": text.optional(),
      remove_client_secret_on_read: z.boolean().default(false),
      "client-id-value": text.optional(),
      "client-secret-value": text.optional(),
      /** Older Keyward names of the paths. */
      "client-id-file": text.optional(),
      "client-secret-file": text.optional(),
    })
    .strict()
    .refine(
      (c) => c["client-id"] ?? c["client-id-value"] ?? c["client-id-file"],
      "give client-id (the path of a file holding the client id) or client-id-value",
    )
    .refine(
      (c) => c["client-secret"] ?? c["client-secret-value"] ?? c["client-secret-file"],
      "give client-secret (the path of a file holding the client secret) or client-secret-value",
    ),
});

const Kubernetes = z.object({
  type: z.literal("kubernetes"),
  config: z
    .object({ ...identityFields, "service-account-token": text.optional() })
    .strict()
    .refine(needsIdentity, IDENTITY_MESSAGE),
});

const JwtLike = z.object({
  type: z.enum(["jwt", "jwt-auth", "oidc", "oidc-auth"]),
  config: z
    .object({ ...identityFields, "jwt-path": text })
    .strict()
    .refine(needsIdentity, IDENTITY_MESSAGE),
});

const IdentityOnly = z.object({
  type: z.enum(["aws-iam", "gcp-id-token"]),
  config: z.object(identityFields).strict().refine(needsIdentity, IDENTITY_MESSAGE),
});

const Azure = z.object({
  type: z.literal("azure"),
  config: z
    .object({ ...identityFields, resource: z.string().trim().url().optional() })
    .strict()
    .refine(needsIdentity, IDENTITY_MESSAGE),
});

const GcpIam = z.object({
  type: z.literal("gcp-iam"),
  config: z
    .object({ ...identityFields, "service-account-key": text.optional() })
    .strict()
    .refine(needsIdentity, IDENTITY_MESSAGE),
});

const Ldap = z.object({
  type: z.literal("ldap-auth"),
  config: z
    .object({
      ...identityFields,
      username: text.optional(),
      password: text.optional(),
      "remove-password-on-read": z.boolean().default(false),
      "username-value": text.optional(),
      "password-value": text.optional(),
    })
    .strict()
    .refine(needsIdentity, IDENTITY_MESSAGE)
    .refine((c) => c.username ?? c["username-value"], "give username (a file's path) or username-value")
    .refine((c) => c.password ?? c["password-value"], "give password (a file's path) or password-value"),
});

const TokenAuth = z.object({
  type: z.literal("token"),
  config: z
    .object({ token: text.optional(), "token-file": text.optional() })
    .strict()
    .refine((c) => c.token || c["token-file"], "give token or token-file"),
});

const Execute = z
  .object({
    command: text,
    timeout: duration(30_000),
    /** Run the command through /bin/sh -c (pipes, variables); otherwise it is split into argv. */
    shell: z.boolean().default(false),
  })
  .strict();

const Template = z
  .object({
    name: text.optional(),
    "source-path": text.optional(),
    "template-content": z.string().optional(),
    "base64-template-content": z.string().optional(),
    "destination-path": text,
    config: z
      .object({
        "polling-interval": duration(300_000),
        /** File mode as an octal string ("0640") or number; 0600 by default. */
        "file-mode": z.union([z.string().regex(/^0?[0-7]{3}$/), z.number().int()]).optional(),
        execute: Execute.optional(),
      })
      .strict()
      .default({}),
  })
  .strict()
  .refine(
    (t) =>
      [t["source-path"], t["template-content"], t["base64-template-content"]].filter((s) => s !== undefined).length ===
      1,
    { message: "give exactly one of source-path, template-content and base64-template-content" },
  );

/** Keys of Infisical's agent that Keyward accepts and does not act on, with the reason logged once. */
const IGNORED = {
  "infisical.retry-strategy":
    "Keyward retries logins, renewals and reads without limit, with backoff from 1 s doubling to 30 s",
  cache: "leases and the access token are held in memory only; a restarted agent takes new ones",
  certificates: "keyward agent does not issue certificates; use the PKI API or ACME/EST",
} as const;

const Server = z
  .object({
    address: z.string().url(),
    /** Infisical's: stop once authenticated and every template rendered once, revoking nothing. */
    "exit-after-auth": z.boolean().default(false),
    /** Infisical's: revoke the leases and the token on shutdown. Keyward's default (absent) is to revoke. */
    "revoke-credentials-on-shutdown": z.boolean().optional(),
    "retry-strategy": z.unknown().optional(),
  })
  .strict();

export const AgentConfigSchema = z
  .object({
    keyward: Server.optional(),
    /** Infisical's agent names the section `infisical`; the same file works here. */
    infisical: Server.optional(),
    auth: z.discriminatedUnion("type", [
      UniversalAuth,
      Kubernetes,
      JwtLike,
      IdentityOnly,
      Azure,
      GcpIam,
      Ldap,
      TokenAuth,
    ]),
    sinks: z
      .array(z.object({ type: z.literal("file"), config: z.object({ path: text }).strict() }).strict())
      .default([]),
    templates: z.array(Template).default([]),
    leases: z
      .object({ "renew-before": duration(0) })
      .strict()
      .default({}),
    health: z
      .object({ address: z.string().regex(/^[^:]+:\d+$/, "host:port, e.g. 127.0.0.1:8125") })
      .strict()
      .optional(),
    cache: z.unknown().optional(),
    certificates: z.unknown().optional(),
  })
  .strict()
  .refine((c) => c.keyward ?? c.infisical, "give the server's address under keyward: (or infisical:)");

export type TemplateSpec = {
  /** For the log and the health report. */
  name: string;
  source: string;
  destination: string;
  pollingMs: number;
  mode: number;
  execute?: { command: string; timeoutMs: number; shell: boolean };
};

/** Where a credential comes from: the value itself, or a file read at each login. */
export type CredentialSource = { value: string } | { path: string; removeOnRead?: boolean };

export type WorkloadType = "kubernetes" | "jwt" | "oidc" | "aws-iam" | "gcp-id-token" | "gcp-iam" | "azure";

export type AuthSpec =
  | { type: "universal-auth"; clientId: CredentialSource; clientSecret: CredentialSource }
  | { type: "kubernetes"; identityId: CredentialSource; tokenPath: string }
  | { type: "jwt" | "oidc"; identityId: CredentialSource; jwtPath: string }
  | { type: "aws-iam" | "gcp-id-token"; identityId: CredentialSource }
  | { type: "gcp-iam"; identityId: CredentialSource; keyPath: string }
  | { type: "azure"; identityId: CredentialSource; resource: string }
  | { type: "ldap-auth"; identityId: CredentialSource; username: CredentialSource; password: CredentialSource }
  | { type: "token"; token: CredentialSource };

export type AgentConfig = {
  url: string;
  auth: AuthSpec;
  sinks: string[];
  templates: TemplateSpec[];
  leaseRenewBeforeMs: number;
  health?: { host: string; port: number };
  exitAfterAuth: boolean;
  /** Revoke the leases and (when it logged in) the token on SIGTERM/SIGINT. */
  revokeOnShutdown: boolean;
  /** Keys accepted but not acted on, each logged once as a warning when the config loads. */
  ignored: { key: string; reason: string }[];
};

export const DEFAULT_SERVICE_ACCOUNT_TOKEN = "/var/run/secrets/kubernetes.io/serviceaccount/token";
export const DEFAULT_AZURE_RESOURCE = "https://management.azure.com/";

const modeOf = (mode: string | number | undefined) =>
  mode === undefined ? 0o600 : typeof mode === "number" ? mode : parseInt(mode, 8);

/** Read and check the agent's YAML file; relative paths in it are taken from the file's folder. */
export const loadAgentConfig = (file: string): AgentConfig => {
  let raw: unknown;
  try {
    raw = parse(readFileSync(file, "utf8"));
  } catch (error) {
    throw new CliError(`Cannot read the agent config ${file}: ${(error as Error).message}`);
  }
  const parsed = AgentConfigSchema.safeParse(raw);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join(".") || "(file)"}: ${i.message}`).join("; ");
    throw new CliError(`The agent config ${file} is not valid: ${issues}`);
  }
  const c = parsed.data;
  const server = (c.keyward ?? c.infisical)!;
  const section = c.keyward ? "keyward" : "infisical";
  const base = dirname(resolve(file));
  const at = (path: string) => resolve(base, path);
  // Infisical's agent lets these variables stand in for the files (a value, or for a file a path).
  const env = parentEnvironment();
  const fromEnv = (name: string) => (env[name]?.trim() ? { value: env[name].trim() } : undefined);
  const source = (value: string | undefined, path: string | undefined, removeOnRead = false): CredentialSource =>
    value !== undefined ? { value } : { path: at(path!), ...(removeOnRead ? { removeOnRead } : {}) };
  const identity = (cfg: { "identity-id"?: string; "identity-id-value"?: string }) =>
    fromEnv("INFISICAL_MACHINE_IDENTITY_ID") ?? source(cfg["identity-id-value"], cfg["identity-id"]);

  const a = c.auth;
  const auth: AuthSpec = (() => {
    switch (a.type) {
      case "universal-auth":
        return {
          type: a.type,
          clientId:
            fromEnv("INFISICAL_UNIVERSAL_AUTH_CLIENT_ID") ??
            source(a.config["client-id-value"], a.config["client-id"] ?? a.config["client-id-file"]),
          clientSecret:
            fromEnv("INFISICAL_UNIVERSAL_AUTH_CLIENT_SECRET") ??
            fromEnv("INFISICAL_UNIVERSAL_CLIENT_SECRET") ??
            source(
              a.config["client-secret-value"],
              a.config["client-secret"] ?? a.config["client-secret-file"],
              a.config.remove_client_secret_on_read,
            ),
        };
      case "kubernetes":
        return {
          type: a.type,
          identityId: identity(a.config),
          tokenPath:
            env.INFISICAL_KUBERNETES_SERVICE_ACCOUNT_TOKEN_PATH?.trim() ||
            (a.config["service-account-token"] ? at(a.config["service-account-token"]) : DEFAULT_SERVICE_ACCOUNT_TOKEN),
        };
      case "jwt":
      case "jwt-auth":
      case "oidc":
      case "oidc-auth":
        return {
          type: a.type.startsWith("jwt") ? "jwt" : "oidc",
          identityId: identity(a.config),
          jwtPath: at(a.config["jwt-path"]),
        };
      case "aws-iam":
      case "gcp-id-token":
        return { type: a.type, identityId: identity(a.config) };
      case "gcp-iam": {
        const keyPath =
          env.INFISICAL_GCP_IAM_SERVICE_ACCOUNT_KEY_FILE_PATH?.trim() ||
          (a.config["service-account-key"] && at(a.config["service-account-key"]));
        if (!keyPath)
          throw new CliError(
            `The agent config ${file} is not valid: auth.config: give service-account-key (the path of the service account's JSON key)`,
          );
        return { type: a.type, identityId: identity(a.config), keyPath };
      }
      case "azure":
        return { type: a.type, identityId: identity(a.config), resource: a.config.resource ?? DEFAULT_AZURE_RESOURCE };
      case "ldap-auth":
        return {
          type: a.type,
          identityId: identity(a.config),
          username: source(a.config["username-value"], a.config.username),
          password: source(a.config["password-value"], a.config.password, a.config["remove-password-on-read"]),
        };
      case "token":
        return { type: a.type, token: source(a.config.token, a.config["token-file"]) };
    }
  })();

  const templates = c.templates.map((t, index): TemplateSpec => {
    const source =
      t["template-content"] ??
      (t["base64-template-content"] !== undefined
        ? Buffer.from(t["base64-template-content"], "base64").toString("utf8")
        : (() => {
            try {
              return readFileSync(at(t["source-path"]!), "utf8");
            } catch (error) {
              throw new CliError(`templates[${index}]: cannot read ${t["source-path"]}: ${(error as Error).message}`);
            }
          })());
    const execute = t.config.execute;
    return {
      name: t.name ?? t["destination-path"],
      source,
      destination: at(t["destination-path"]),
      pollingMs: Math.max(t.config["polling-interval"], 1000),
      mode: modeOf(t.config["file-mode"]),
      execute: execute && { command: execute.command, timeoutMs: execute.timeout, shell: execute.shell },
    };
  });
  const ignored: AgentConfig["ignored"] = [];
  if (server["retry-strategy"] !== undefined)
    ignored.push({ key: `${section}.retry-strategy`, reason: IGNORED["infisical.retry-strategy"] });
  if (c.cache !== undefined) ignored.push({ key: "cache", reason: IGNORED.cache });
  if (c.certificates !== undefined) ignored.push({ key: "certificates", reason: IGNORED.certificates });
  const [host, port] = c.health?.address.split(":") ?? [];
  return {
    url: server.address.replace(/\/+$/, "").replace(/\/api$/, ""),
    auth,
    sinks: c.sinks.map((s) => at(s.config.path)),
    templates,
    leaseRenewBeforeMs: c.leases["renew-before"],
    health: host && port ? { host, port: Number(port) } : undefined,
    exitAfterAuth: server["exit-after-auth"],
    revokeOnShutdown: server["revoke-credentials-on-shutdown"] ?? true,
    ignored,
  };
};
