import type { Database, DatabaseKind } from "./db/database";
import type { Env } from "./env";
import type { Logger } from "./http/logger";
import type { TokenCache } from "./http/token-cache";
import type { SecretBox } from "./crypto/envelope";
import type { Job } from "./jobs/job";
import type { DataKeyCache } from "./modules/project-keys/data-key-cache";

/** The authenticated caller: a machine identity holding an access token. */
export type Actor = {
  identityId: string;
  identityName: string;
  orgId: string;
  orgRole: string;
  /** Set when the identity is owned by a project rather than the organization. */
  identityProjectId: string | null;
  tokenId: string;
  authMethod: string;
  isInstanceAdmin: boolean;
};

/** A token row as authentication needs it; cached for at most a second. */
export type AuthenticatedToken = Actor & {
  ttl: number;
  numUsesLimit: number;
  issuedAt: number;
  trustedIps: { ipAddress: string; type: "ipv4" | "ipv6"; prefix?: number }[];
};

/** Everything the app needs, built once by main.ts (or a test) and passed to createApp. */
export type AppDeps = {
  db: Database;
  dbKind: DatabaseKind;
  env: Env;
  logger: Logger;
  secretBox: SecretBox;
  ping: () => Promise<boolean>;
  tokenCache: TokenCache<AuthenticatedToken>;
  /** Unwrapped per-project data keys, briefly (never plaintext values). */
  dataKeys: DataKeyCache;
  /** Background jobs this process may run (main.ts starts them; tests start the ones they need). */
  jobs: Job[];
};

/** What a service sees of a request: never `req` itself. */
export type RequestContext = {
  deps: AppDeps;
  actor: Actor;
  clientIp: string;
  reqId: string;
};

/** A public route's context has no actor. */
export type PublicContext = Omit<RequestContext, "actor">;
