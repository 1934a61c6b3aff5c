import { fileURLToPath } from "node:url";
import { z } from "zod";

/** Where `pnpm build` puts the web console (apps/web/dist), relative to this file. */
const BUILT_CONSOLE = fileURLToPath(new URL("../../web/dist", import.meta.url));

/** Configuration, parsed once. The only reader of process.env. */
const EnvSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  HOST: z.string().default("127.0.0.1"),
  DATABASE_URL: z
    .string()
    .url()
    .refine((v) => /^postgres(ql)?:\/\//.test(v), "must be a postgres:// URL")
    .optional(),
  DATA_DIR: z.string().min(1).default("./.keyward-data"),
  /** Embedded PGlite's buffer pool (PostgreSQL units); a smaller one starts faster and holds less memory. */
  PGLITE_SHARED_BUFFERS: z
    .string()
    .regex(/^[1-9][0-9]{0,5}(kB|MB|GB)$/, "must be a size such as 16MB or 1GB")
    .default("128MB"),
  ENCRYPTION_KEY: z
    .string()
    .refine((v) => Buffer.from(v, "base64").length === 32, "must be 32 bytes, base64-encoded")
    .optional(),
  /** The ENCRYPTION_KEY being replaced: root keys sealed by it are re-sealed under ENCRYPTION_KEY at start. */
  ENCRYPTION_KEY_PREVIOUS: z
    .string()
    .refine((v) => Buffer.from(v, "base64").length === 32, "must be 32 bytes, base64-encoded")
    .optional(),
  /** PKCS#11 library of the HSM that seals the root keys; with HSM_PIN and HSM_KEY_LABEL it makes the HSM the seal. */
  HSM_LIB_PATH: z.string().min(1).optional(),
  /** User PIN of the HSM token; never logged. */
  HSM_PIN: z.string().min(1).optional(),
  /** Position of the token's slot in the library's slot list (not a PKCS#11 slot id). */
  HSM_SLOT: z.coerce.number().int().min(0).max(1_000).default(0),
  /** Label of the AES-256 key on the token that seals the root keys. */
  HSM_KEY_LABEL: z.string().min(1).max(128).optional(),
  /** Generate the labelled key when the token has none (otherwise a missing key stops the start). */
  HSM_GENERATE_KEY: z.enum(["true", "false"]).default("false"),
  /** The label of the HSM key being replaced: root keys sealed by it are re-sealed under HSM_KEY_LABEL at start. */
  HSM_KEY_LABEL_PREVIOUS: z.string().min(1).max(128).optional(),
  /** Rows re-wrapped per transaction by a root-key rotation. */
  ROOT_KEY_REWRAP_BATCH_SIZE: z.coerce.number().int().min(1).max(10_000).default(500),
  /** Pause between two batches of a root-key rotation, to spare a busy database. */
  ROOT_KEY_REWRAP_PAUSE_MS: z.coerce.number().int().min(0).max(60_000).default(0),
  TRUST_PROXY: z
    .string()
    .optional()
    .transform((v) =>
      v
        ? v
            .split(",")
            .map((s) => s.trim())
            .filter(Boolean)
        : [],
    ),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  ALLOW_PRIVATE_OUTBOUND: z
    .enum(["true", "false", "loopback"])
    .default("false")
    .transform((v) => (v === "true" ? "private" : v === "loopback" ? "loopback" : "none")),
  /** PEM file of extra CAs trusted (besides the system roots) for outbound calls with no CA of their own. */
  OUTBOUND_EXTRA_CA_FILE: z.string().min(1).optional(),
  /** Base URL replacing https://www.googleapis.com for Google's signing keys (air-gapped installs, tests). */
  GCP_KEYS_BASE_URL: z.string().url().default("https://www.googleapis.com"),
  /** Base URL replacing https://login.microsoftonline.com for Azure tenants' signing keys. */
  AZURE_KEYS_BASE_URL: z.string().url().default("https://login.microsoftonline.com"),
  /** Google's OAuth 2.0 token endpoint, where a GCP connection's service-account key gets access tokens. */
  GCP_OAUTH2_TOKEN_URL: z.string().url().default("https://oauth2.googleapis.com/token"),
  /** Base URL of Google Cloud Secret Manager's API (secret syncs). */
  GCP_SECRET_MANAGER_BASE_URL: z.string().url().default("https://secretmanager.googleapis.com"),
  /** Base URL of Microsoft Entra's token endpoints (`/<tenantId>/oauth2/v2.0/token`), for Azure Key Vault connections. */
  AZURE_LOGIN_BASE_URL: z.string().url().default("https://login.microsoftonline.com"),
  /**
   * Keyward's own AWS access key, with which `assume-role` AWS connections assume their role (the
   * organization's id as external id). Without it such connections are refused.
   */
  APP_CONNECTION_AWS_ACCESS_KEY_ID: z.string().trim().min(1).max(128).optional(),
  APP_CONNECTION_AWS_SECRET_ACCESS_KEY: z.string().trim().min(1).max(1_024).optional(),
  /** Project events stream: open streams one caller (identity or person) may hold at once. */
  EVENTS_MAX_STREAMS_PER_ACTOR: z.coerce.number().int().min(1).max(1_000).default(10),
  /** Project events stream: open streams one serving process holds at most. */
  EVENTS_MAX_STREAMS: z.coerce.number().int().min(1).max(100_000).default(2_000),
  /** Seconds between a stream's keep-alive pings. */
  EVENTS_PING_INTERVAL_S: z.coerce.number().min(0.05).max(300).default(15),
  /** Seconds between checks that a stream's token is still valid and still holds its rights (at a ping). */
  EVENTS_RECHECK_INTERVAL_S: z.coerce.number().min(0.05).max(3_600).default(30),
  /** Seconds an event is kept for clients reconnecting with Last-Event-ID (older: a `resync` event). */
  EVENTS_REPLAY_WINDOW_S: z.coerce
    .number()
    .int()
    .min(1)
    .max(7 * 86_400)
    .default(3_600),
  /** Bytes a stream may have waiting to be sent before its reader counts as too slow and is dropped. */
  EVENTS_MAX_BUFFERED_BYTES: z.coerce
    .number()
    .int()
    .min(1_024)
    .max(64 * 1024 * 1024)
    .default(1024 * 1024),
  /** Days an audit event is kept (a project may keep its events for fewer). */
  AUDIT_LOG_RETENTION_DAYS: z.coerce.number().int().min(1).max(36_500).default(90),
  /** How often buffered read events are written (at most this much of them is lost on a hard kill). */
  AUDIT_LOG_FLUSH_INTERVAL_MS: z.coerce.number().int().min(10).max(1_000).default(1_000),
  /** How often audit-log streams look for undelivered events. */
  AUDIT_STREAM_INTERVAL_MS: z.coerce.number().int().min(20).max(60_000).default(1_000),
  /** How long one delivery to a stream's receiver may take before it counts as failed. */
  AUDIT_STREAM_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(10_000),
  /** The longest wait between delivery attempts to a failing receiver (backoff doubles up to it). */
  AUDIT_STREAM_MAX_BACKOFF_MS: z.coerce.number().int().min(100).max(3_600_000).default(60_000),
  SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().min(0).default(10_000),
  /** Length of a rate-limit window; each limit below counts requests per client IP per window. */
  RATE_LIMIT_WINDOW_MS: z.coerce.number().int().min(1_000).max(3_600_000).default(60_000),
  /** Logins (every auth method, and gateway login) per client IP per window; 0: no limit. */
  RATE_LIMIT_LOGIN: z.coerce.number().int().min(0).default(600),
  /** Token renewals and revocations per client IP per window; 0: no limit. */
  RATE_LIMIT_TOKEN: z.coerce.number().int().min(0).default(600),
  /** Events stream openings per client address per window (0: unlimited). */
  RATE_LIMIT_EVENT_SUBSCRIBE: z.coerce.number().int().min(0).default(600),
  /** Secret reads (v3 raw and v4) per client IP per window; 0 (the default): no limit, no write per read. */
  RATE_LIMIT_SECRET_READ: z.coerce.number().int().min(0).default(0),
  /** OCSP requests (every CA's responder, GET and POST) per client IP per window; 0: no limit. */
  RATE_LIMIT_OCSP: z.coerce.number().int().min(0).default(600),
  /** Port of the Prometheus `GET /metrics` listener; unset: no metrics listener. */
  METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  /** Address the metrics listener binds; loopback by default, so only the host (or its scraper) reads it. */
  METRICS_HOST: z.string().default("127.0.0.1"),
  /** Authenticated tokens each process keeps (~560 B each); least recently written evicted first. */
  TOKEN_CACHE_MAX_ENTRIES: z.coerce.number().int().min(1).max(10_000_000).default(200_000),
  /** Built abilities each process keeps, each shared by every (actor, project) with the same grants; least recently written evicted first. */
  ABILITY_CACHE_MAX_ENTRIES: z.coerce.number().int().min(1).max(10_000_000).default(10_000),
  /** (actor, project) entries naming a built ability and the permission version it holds at (a few hundred bytes each). */
  PROJECT_ACCESS_CACHE_MAX_ENTRIES: z.coerce.number().int().min(1).max(10_000_000).default(200_000),
  /** Processes serving the port (node:cluster); unset: one per CPU with PostgreSQL. Always 1 on PGlite. */
  WORKERS: z.coerce.number().int().min(1).max(256).optional(),
  /** PostgreSQL connections per process (each cluster worker has its own pool), plus half as many for the kept-plan lookups. */
  DB_POOL_SIZE: z.coerce.number().int().min(1).max(1_000).default(10),
  /** A secret list of more rows than this is large: only SECRET_LIST_SLOTS of them are built at once per process. */
  SECRET_LIST_LARGE_ROWS: z.coerce.number().int().min(1).max(10_000_000).default(1_000),
  /** Large secret lists built at once per process; the others wait their turn. */
  SECRET_LIST_SLOTS: z.coerce.number().int().min(1).max(1_000).default(1),
  /** How long a large secret list waits for its turn before it is answered 503 with Retry-After (0: no waiting). */
  SECRET_LIST_QUEUE_TIMEOUT_MS: z.coerce.number().int().min(0).max(600_000).default(20_000),
  /** How long a request waits for a database connection before it is answered 503. */
  DB_CONNECT_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(3_000),
  /** Longest a single SQL statement may run (PostgreSQL statement_timeout); past it the request is a 503. 0: no bound. */
  DB_STATEMENT_TIMEOUT_MS: z.coerce.number().int().min(0).max(3_600_000).default(5_000),
  /** At start, while PostgreSQL cannot be reached: the longest pause between attempts to migrate it (from 250 ms, doubling). */
  DB_START_RETRY_MAX_MS: z.coerce.number().int().min(10).max(600_000).default(10_000),
  /** How often the lease-revocation job looks for expired leases (expired leases go within 10 s by default). */
  /** How often each instance looks for due secret rotations (and rotations left half-way). */
  ROTATION_INTERVAL_MS: z.coerce.number().int().min(50).max(3_600_000).default(30_000),
  /** The length of a rotation interval's unit in seconds: a day; tests shorten it. */
  ROTATION_INTERVAL_UNIT_S: z.coerce.number().int().min(1).max(86_400).default(86_400),
  /**
   * How long one use of an outside system may take, connecting included: a dynamic secret's target, a
   * rotation's, an app connection's check. Lease claims and the grace of a lease still being created are
   * twice this, so a process that died holding one is taken over after that long.
   */
  CONNECTOR_DEADLINE_MS: z.coerce.number().int().min(1_000).max(120_000).default(10_000),
  /** How often each instance looks for due secret syncs (retries, runs another instance queued, missed notices). */
  SECRET_SYNC_INTERVAL_MS: z.coerce.number().int().min(50).max(600_000).default(2_000),
  /** How long after a change a sync runs: changes within it are pushed together. */
  SECRET_SYNC_DEBOUNCE_MS: z.coerce.number().int().min(0).max(60_000).default(300),
  /** Longest wait before a failed sync is tried again (from 1 s, doubling). */
  SECRET_SYNC_BACKOFF_MAX_MS: z.coerce.number().int().min(1_000).max(86_400_000).default(30_000),
  /** How long after its last push an auto sync runs again on its own, to find and correct drift at the destination. */
  SECRET_SYNC_RECHECK_S: z.coerce.number().int().min(10).max(604_800).default(3_600),
  /** How long an instance holds a sync it runs; a claim left by a process that died expires after it. */
  SECRET_SYNC_CLAIM_TTL_S: z.coerce.number().int().min(5).max(3_600).default(600),
  /** How long an instance holds a rotation it runs; a claim left by a process that died expires after it. */
  ROTATION_CLAIM_TTL_S: z.coerce.number().int().min(1).max(3_600).default(120),
  LEASE_REVOCATION_INTERVAL_MS: z.coerce.number().int().min(50).max(60_000).default(2_000),
  /** Revocations one instance runs at once against one dynamic secret's target (a backlog is worked through at this pace). */
  LEASE_REVOCATION_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(4),
  /** Longest wait after failed revocations (of a lease, or of a whole dynamic secret whose target refuses); doubles up to it. */
  LEASE_REVOCATION_BACKOFF_MAX_MS: z.coerce.number().int().min(1_000).max(86_400_000).default(600_000),
  /** Leases one dynamic secret may have at once (counting those still being revoked). */
  MAX_LEASE_LIMIT: z.coerce.number().int().min(1).max(1_000_000).default(10_000),
  /** The base URL clients reach Keyward at (no trailing slash); ACME URLs are built on it, else on the request's host. */
  PUBLIC_URL: z
    .string()
    .url()
    .refine((v) => /^https?:\/\//.test(v), "must be an http(s) URL")
    .transform((v) => v.replace(/\/+$/, ""))
    .optional(),
  /** The port ACME http-01 validation connects to (80 per RFC 8555; another port only for tests or air-gapped relays). */
  ACME_HTTP01_PORT: z.coerce.number().int().min(1).max(65535).default(80),
  /** DNS servers (host or host:port, comma-separated) for ACME dns-01 TXT lookups; the system resolver when unset. */
  ACME_DNS_RESOLVER: z
    .string()
    .optional()
    .transform((v) =>
      v
        ? v
            .split(",")
            .map((s) => s.trim())
            .filter(Boolean)
        : [],
    ),
  /** How often the certificate auto-renewal job looks for certificates due for renewal. */
  CERT_RENEWAL_INTERVAL_MS: z.coerce.number().int().min(50).max(3_600_000).default(60_000),
  /** Test only: the process kills itself (SIGKILL) when it reaches the named point, to prove crash safety. */
  KEYWARD_FAILPOINT: z.string().min(1).max(100).optional(),
  /** A client must have sent all request headers within this time, or it gets a 408 and is disconnected. */
  HTTP_HEADERS_TIMEOUT_MS: z.coerce.number().int().min(1).max(600_000).default(10_000),
  /** A client must have sent the whole request (headers and body) within this time; 0 turns the limit off. */
  HTTP_REQUEST_TIMEOUT_MS: z.coerce.number().int().min(0).max(3_600_000).default(30_000),
  /** An idle keep-alive connection is closed after this time. */
  HTTP_KEEP_ALIVE_TIMEOUT_MS: z.coerce.number().int().min(1).max(600_000).default(5_000),
  /** Where invitation e-mails go out: smtp://[user:pass@]host:port (STARTTLS when offered) or smtps://…; unset, invite links are returned to the inviter. */
  SMTP_URL: z
    .string()
    .url()
    .refine((v) => /^smtps?:\/\//.test(v), "must be an smtp:// or smtps:// URL")
    .optional(),
  /** The sender of Keyward's e-mails. */
  SMTP_FROM: z.string().min(3).max(320).default("Keyward <no-reply@keyward.invalid>"),
  /** A person's access token lives this long; the console renews it with the refresh cookie. */
  SESSION_ACCESS_TOKEN_TTL_S: z.coerce.number().int().min(30).max(86_400).default(900),
  /** A session unused (not refreshed) this long ends. */
  SESSION_IDLE_TTL_S: z.coerce.number().int().min(60).max(31_536_000).default(1_209_600),
  /** A session ends this long after sign-in, however it is used. */
  SESSION_ABSOLUTE_TTL_S: z.coerce.number().int().min(60).max(31_536_000).default(2_592_000),
  /** The built web console served at `/`; empty turns it off. Without an index.html there, only the API is served. */
  WEB_DIST_DIR: z
    .string()
    .default(BUILT_CONSOLE)
    .transform((v) => (v.trim() === "" ? undefined : v)),
});

/** Node refuses a headers timeout longer than the request timeout. */
const CheckedEnvSchema = EnvSchema.refine(
  (env) => env.HTTP_REQUEST_TIMEOUT_MS === 0 || env.HTTP_HEADERS_TIMEOUT_MS <= env.HTTP_REQUEST_TIMEOUT_MS,
  { path: ["HTTP_HEADERS_TIMEOUT_MS"], message: "must not be larger than HTTP_REQUEST_TIMEOUT_MS" },
).superRefine((env, issues) => {
  // The HSM is configured by all three or none: a partial set is a mistake, never a silent software seal.
  const set = [env.HSM_LIB_PATH, env.HSM_PIN, env.HSM_KEY_LABEL].filter((v) => v !== undefined).length;
  if (set === 0 || set === 3) return;
  const missing = ["HSM_LIB_PATH", "HSM_PIN", "HSM_KEY_LABEL"].filter((name) => env[name as keyof Env] === undefined);
  issues.addIssue({
    code: "custom",
    path: [missing[0]!],
    message: `is required with the other HSM_* variables (missing: ${missing.join(", ")})`,
  });
});

export type Env = z.infer<typeof EnvSchema>;

/** Every variable the schema reads, in its order (docs/configuration.md lists the same, checked by a test). */
export const ENV_VARIABLES: readonly string[] = Object.keys(EnvSchema.shape);

/** Parse the environment; a bad value gives one line naming it. */
export const loadEnv = (source: Record<string, string | undefined> = process.env): Env => {
  const parsed = CheckedEnvSchema.safeParse(source);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Error(`Invalid configuration: ${issue?.path.join(".")} ${issue?.message ?? ""}`.trim());
  }
  return parsed.data;
};
