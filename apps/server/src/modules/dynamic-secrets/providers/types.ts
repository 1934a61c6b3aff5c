import type { BoundedCache } from "../../../lib/bounded-cache";
import type { OutboundPolicy } from "../../../lib/outbound";
import type { TargetPool } from "../../connectors/postgres-pool";

export type { TargetPool } from "../../connectors/postgres-pool";

/**
 * What providers get from the app: the outbound policy, the deadline every provider call (connect plus
 * statements) ends within (CONNECTOR_DEADLINE_MS; the job's claims outlast it) and the app's bounded
 * pools of target connections.
 */
export type ProviderContext = { outbound: OutboundPolicy; deadlineMs: number; pools: BoundedCache<TargetPool> };

/**
 * What a dynamic-secret provider does with its (decrypted, contract-validated) inputs. Revocation
 * must be idempotent: taking back a credential that is already gone succeeds.
 */
export type Provider<I> = {
  /** Business checks beyond the contract (statement templates); throws BadRequestError. */
  validate: (inputs: I) => void;
  /** Connects with the root credentials; throws BadRequestError when that fails. */
  verifyConnection: (inputs: I, ctx: ProviderContext) => Promise<void>;
  create: (
    inputs: I,
    lease: { username: string; expireAt: Date },
    ctx: ProviderContext,
  ) => Promise<{ data: Record<string, string>; password?: string }>;
  renew: (inputs: I, username: string, expireAt: Date, ctx: ProviderContext) => Promise<void>;
  revoke: (inputs: I, username: string, ctx: ProviderContext) => Promise<void>;
  /**
   * Names of the credentials on the target that contain `marker` (for the orphan sweeper), a page at
   * a time (see entity-pages.ts); each page is asked for when the previous one has been dealt with.
   */
  listEntities?: (inputs: I, marker: string, ctx: ProviderContext) => AsyncIterable<string[]>;
  /** The inputs as they may be shown: root secrets removed. */
  redact: (inputs: I) => Record<string, unknown>;
  /** Longest credential name the target accepts. */
  maxUsernameLength: number;
  /** Secrets an error message might echo (root password), for redaction. */
  secretsOf: (inputs: I) => (string | undefined)[];
};
