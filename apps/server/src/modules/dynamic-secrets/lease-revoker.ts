import { inTransaction } from "../../db/transaction";
import { recordPlatformChange } from "../audit/audit-scope";
import { randomUUID } from "node:crypto";
import type { AppDeps, ChangeContext } from "../../context";
import { deleteDrainedDynamicSecrets, findProviderConfig } from "./dynamic-secret.repository";
import { decryptInputs, providerContext, providerOf } from "./dynamic-secret.scope";
import { failpoint } from "../../lib/failpoint";
import {
  claimLockedLeases,
  deleteClaimedLease,
  findDynamicSecretOwner,
  lockDueLeases,
  recordFailedRevocation,
  type LeaseRow,
} from "./lease.repository";
import { redactSecrets } from "./providers/templates";
import { PROVIDER_DEADLINE_MS, type Provider } from "./providers/types";

/** A claim outlives any provider call (bounded by PROVIDER_DEADLINE_MS), so no two holders overlap. */
export const CLAIM_SECONDS = (PROVIDER_DEADLINE_MS * 2) / 1000;
/** A lease still `creating` after this is abandoned (its creator died): anything it made is taken back. */
export const CREATING_GRACE_SECONDS = (PROVIDER_DEADLINE_MS * 2) / 1000;
/** Leases claimed per round; every one is revoked in parallel, so a round ends within one deadline. */
const BATCH = 16;
const MAX_RETRY_SECONDS = 600;

/** Failed attempts after which the lease of a detached secret (its folder or project deleted) is given up. */
const DETACHED_GIVE_UP_ATTEMPTS = 10;

type LoadedSecret = { provider: Provider<unknown>; inputs: unknown; detached: boolean } | undefined;

const loadSecret = async (deps: AppDeps, dynamicSecretId: string): Promise<LoadedSecret> => {
  const config = await findProviderConfig(deps.db, dynamicSecretId);
  if (!config) return undefined;
  return {
    provider: providerOf(config.type).provider,
    inputs: decryptInputs({ deps }, dynamicSecretId, config.encrypted_inputs),
    detached: config.folder_id === null,
  };
};

/** Exponential backoff from twice the job interval, capped at ten minutes. */
const retrySeconds = (deps: AppDeps, attempts: number) =>
  Math.min(MAX_RETRY_SECONDS, ((deps.env.LEASE_REVOCATION_INTERVAL_MS * 2) / 1000) * 2 ** Math.max(0, attempts - 1));

/**
 * Revoke one lease this caller has claimed. The row is deleted only once the provider confirms the
 * credential is gone (or the caller forces it); a failure is recorded and retried with backoff.
 */
export const revokeClaimedLease = async (
  ctx: ChangeContext,
  lease: LeaseRow,
  token: string,
  options: { isForced?: boolean; secret?: LoadedSecret } = {},
): Promise<{ revoked: boolean; row: LeaseRow }> => {
  const { deps } = ctx;
  let failure: string | undefined;
  failpoint(deps.env, "revoke-after-claim");
  const secret = options.secret ?? (await loadSecret(deps, lease.dynamic_secret_id));
  if (secret) {
    try {
      await secret.provider.revoke(secret.inputs, lease.external_entity_id, providerContext(deps));
    } catch (error) {
      failure = redactSecrets(
        error instanceof Error ? error.message : String(error),
        secret.provider.secretsOf(secret.inputs),
      );
    }
  }
  failpoint(deps.env, "revoke-after-provider");
  // Nobody can see or force a detached secret's lease any more, so after long enough it is given up.
  const givenUp = failure !== undefined && secret?.detached === true && lease.attempts >= DETACHED_GIVE_UP_ATTEMPTS;
  if (failure === undefined || options.isForced || givenUp) {
    if (givenUp)
      deps.logger.error({ leaseId: lease.id, reason: failure }, "gave up revoking a lease of a deleted dynamic secret");
    // In a transaction, so a revocation records its event with the change (the request's, or the platform's).
    const deleted = await inTransaction(ctx, async (trx) => {
      const row = await deleteClaimedLease(trx, lease.id, token);
      if (row) {
        const owner = await findDynamicSecretOwner(trx, lease.dynamic_secret_id);
        await recordPlatformChange(trx, deps, {
          orgId: owner?.orgId ?? null,
          projectId: owner?.projectId ?? null,
          type: "revoke-dynamic-secret-lease",
          metadata: {
            leaseId: lease.id,
            dynamicSecretId: lease.dynamic_secret_id,
            ...(owner ? { dynamicSecretName: owner.name, environment: owner.environment } : {}),
            reason: options.isForced ? "forced" : givenUp ? "given-up" : "expired",
          },
        });
      }
      return row;
    });
    return { revoked: true, row: deleted ?? lease };
  }
  deps.logger.warn(
    { leaseId: lease.id, dynamicSecretId: lease.dynamic_secret_id, reason: failure },
    "lease revocation failed; will retry",
  );
  const row = await inTransaction(ctx, (trx) =>
    recordFailedRevocation(trx, lease.id, token, failure, retrySeconds(deps, Math.max(1, lease.attempts))),
  );
  return { revoked: false, row: row ?? lease };
};

const claimBatch = (deps: AppDeps, token: string) =>
  inTransaction(deps.db, async (trx) => {
    const due = await lockDueLeases(trx, BATCH, CREATING_GRACE_SECONDS);
    return due.length === 0
      ? []
      : claimLockedLeases(
          trx,
          due.map((row) => row.id),
          token,
          CLAIM_SECONDS,
        );
  });

/**
 * One pass of the revocation job: claim due leases in small rounds, revoke them, then remove the
 * dynamic secrets whose deletion was waiting on them. Returns how many leases were handled.
 */
export const runRevocationPass = async (deps: AppDeps, options: { maxRounds?: number } = {}) => {
  let handled = 0;
  const secrets = new Map<string, Promise<LoadedSecret>>();
  for (let round = 0; round < (options.maxRounds ?? 50); round += 1) {
    const token = randomUUID();
    const claimed = await claimBatch(deps, token);
    if (claimed.length === 0) break;
    await Promise.all(
      claimed.map(async (lease) => {
        try {
          let secret = secrets.get(lease.dynamic_secret_id);
          if (!secret) secrets.set(lease.dynamic_secret_id, (secret = loadSecret(deps, lease.dynamic_secret_id)));
          const { revoked } = await revokeClaimedLease({ deps }, lease, token, { secret: await secret });
          if (revoked)
            deps.metrics.leaseRevocationLag.observe(Math.max(0, Date.now() - lease.expire_at.getTime()) / 1e3);
          else deps.metrics.jobFailures.inc({ job: "lease-revocation" });
        } catch (error) {
          // The claim lapses and another pass retries; one bad lease must not stop the others.
          deps.metrics.jobFailures.inc({ job: "lease-revocation" });
          deps.logger.error({ err: error, leaseId: lease.id }, "lease revocation crashed");
        }
      }),
    );
    handled += claimed.length;
    if (claimed.length < BATCH) break;
  }
  await deleteDrainedDynamicSecrets(deps.db);
  return handled;
};
