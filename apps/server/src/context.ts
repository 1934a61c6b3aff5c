import type { Database, DatabaseKind } from "./db/database";
import type { Env } from "./env";
import type { DbHealth } from "./db/health";
import type { Lifecycle } from "./lib/lifecycle";
import type { Metrics } from "./lib/metrics";
import type { Logger } from "./lib/logger";
import type { TokenCache } from "./modules/access-tokens/token-cache";
import type { SecretBox } from "./crypto/envelope";
import type { Job } from "./lib/loop";
import type { TemplateResolver } from "./modules/projects/project-template-hook";
import type { Lru } from "./lib/lru";
import type { TargetPool } from "./modules/dynamic-secrets/providers/types";
import type { AbilityCache, ProjectIdCache } from "./modules/authz/ability-cache";
import type { DataKeyCache } from "./modules/project-keys/data-key-cache";
import type { KmsMaterialCache } from "./modules/kms/kms-material-cache";
import type { AuditBuffer } from "./modules/audit/audit-buffer";
import type { AuditActor } from "./modules/audit/audit-writer";
import type { RequestScope } from "./db/transaction";

/**
 * The authenticated caller: a machine identity holding an access token. One frozen object per cached
 * token, shared by the requests it serves.
 */
export type Actor = Readonly<{
  identityId: string;
  identityName: string;
  orgId: string;
  orgRole: string;
  /** Set when the identity is owned by a project rather than the organization. */
  identityProjectId: string | null;
  tokenId: string;
  authMethod: string;
  isInstanceAdmin: boolean;
}>;

/** A token row as authentication needs it; cached for at most a second. */
export type AuthenticatedToken = {
  /** Handed to every request the cached token serves. */
  actor: Actor;
  ttl: number;
  numUsesLimit: number;
  issuedAt: number;
  trustedIps: { ipAddress: string; type: "ipv4" | "ipv6"; prefix?: number }[];
};

/** Everything the app needs, built once by main.ts (or a test) and passed to createApp. */
/** The time source of the app: tests and benchmarks may pass their own. */
export type Clock = { now: () => number };

export type AppDeps = {
  clock: Clock;
  db: Database;
  dbKind: DatabaseKind;
  env: Env;
  logger: Logger;
  secretBox: SecretBox;
  ping: () => Promise<boolean>;
  /** The database's last known state: the status route and the error handler read it. */
  dbHealth: DbHealth;
  /** Draining on shutdown, and the requests still in flight. */
  lifecycle: Lifecycle;
  /** Prometheus metrics of this process (served on METRICS_PORT). */
  metrics: Metrics;
  tokenCache: TokenCache<AuthenticatedToken>;
  /** Built abilities per (identity, project), keyed by the project's permission version. */
  abilityCache: AbilityCache;
  projectIdCache: ProjectIdCache;
  /** When this process last wrote each token's last-used time (written at most every 10 s). */
  tokenUseWrites: Lru<number>;
  /** Pooled connections to dynamic-secret targets, per set of root credentials. */
  targetPools: Lru<TargetPool>;
  /** Cross-module behaviour wired here rather than by imports that would form a cycle. */
  hooks: { resolveProjectTemplate: TemplateResolver };
  /** Unwrapped per-project data keys, briefly (never plaintext values). */
  dataKeys: DataKeyCache;
  /** Unwrapped KMS key versions, briefly (in memory only). */
  kmsMaterial: KmsMaterialCache;
  /** Read events waiting for the audit-flush job (changes write theirs in their own transaction). */
  auditBuffer: AuditBuffer;
  /** Each caller's audit actor with its serialised form, once per `Actor` (so once per cached token). */
  auditActors: WeakMap<Actor, AuditActor>;
  /** Signing keys fetched for workload logins (JWKS, x509 maps), per URL and trust; entries expire. */
  keySets: Lru<{ document: unknown; fetchedAt: number; refetchedAt?: number }>;
  /** System roots plus OUTBOUND_EXTRA_CA_FILE, for outbound calls with no CA of their own (undefined: defaults). */
  outboundCa: string | undefined;
  /** Background jobs this process may run (main.ts starts them; tests start the ones they need). */
  jobs: AppJob[];
};

/** What a service sees of a request: never `req` itself. */
export type RequestContext = {
  deps: AppDeps;
  actor: Actor;
  clientIp: string;
  reqId: string;
  /** An audited request's scope: `inTransaction(ctx, …)` writes its event with the change. */
  scope?: RequestScope;
};

/** What a change needs to commit with its event: the app, and the request's (or a job's) scope. */
export type ChangeContext = Pick<RequestContext, "deps" | "scope">;

/** What permission checks need: the app and the caller. */
export type ActorContext = Pick<RequestContext, "deps" | "actor" | "scope">;

/** A public route's context has no actor. */
export type PublicContext = Omit<RequestContext, "actor">;

/** A background job of this server: started with its dependencies. */
export type AppJob = Job<AppDeps>;
