import { inTransaction } from "../../db/transaction";
import { recordPlatformChanges } from "../audit/audit-scope";
import type { AppDeps, ChangeContext } from "../../context";
import { findProviderConfig } from "./dynamic-secret.repository";
import { decryptInputs, providerContext, providerOf } from "./dynamic-secret.scope";
import { failpoint } from "../../lib/failpoint";
import { deleteClaimedLeases, findDynamicSecretOwner, recordFailedRevocation, type LeaseRow } from "./lease.repository";
import { redactSecrets } from "./providers/templates";
import type { Provider } from "./providers/types";

/** A claim outlives any provider call (bounded by CONNECTOR_DEADLINE_MS), so no two holders overlap. */
export const claimSeconds = (deps: AppDeps) => (deps.env.CONNECTOR_DEADLINE_MS * 2) / 1000;
/** A lease still `creating` after this is abandoned (its creator died): anything it made is taken back. */
export const creatingGraceSeconds = (deps: AppDeps) => (deps.env.CONNECTOR_DEADLINE_MS * 2) / 1000;

/** Failed attempts after which the lease of a detached secret (its folder or project deleted) is given up. */
const DETACHED_GIVE_UP_ATTEMPTS = 10;

export type LoadedSecret = { provider: Provider<unknown>; inputs: unknown; detached: boolean } | undefined;

export const loadSecret = async (deps: AppDeps, dynamicSecretId: string): Promise<LoadedSecret> => {
  const config = await findProviderConfig(deps.db, dynamicSecretId);
  if (!config) return undefined;
  return {
    provider: providerOf(config.type).provider,
    inputs: decryptInputs({ deps }, dynamicSecretId, config.encrypted_inputs),
    detached: config.folder_id === null,
  };
};

/** The first wait after a failed revocation: twice the job interval (doubling from there). */
export const backoffBaseSeconds = (deps: AppDeps) => (deps.env.LEASE_REVOCATION_INTERVAL_MS * 2) / 1000;
export const backoffMaxSeconds = (deps: AppDeps) => deps.env.LEASE_REVOCATION_BACKOFF_MAX_MS / 1000;

/** A lease's own exponential backoff (a credential the target refuses to drop), capped. */
const retrySeconds = (deps: AppDeps, attempts: number) =>
  Math.min(backoffMaxSeconds(deps), backoffBaseSeconds(deps) * 2 ** Math.max(0, attempts - 1));

export type RevokedLease = { lease: LeaseRow; reason: "forced" | "given-up" | "expired" };

/**
 * Drop the rows of leases whose credentials are gone, those this caller still holds, with one event
 * each (the request's, or the platform's), in one transaction. Returns the rows deleted.
 */
export const finishRevocations = async (ctx: ChangeContext, token: string, revoked: RevokedLease[]) => {
  if (revoked.length === 0) return [];
  const reasons = new Map(revoked.map((r) => [r.lease.id, r.reason]));
  return inTransaction(ctx, async (trx) => {
    const rows = await deleteClaimedLeases(trx, [...reasons.keys()], token);
    const owners = new Map<string, Awaited<ReturnType<typeof findDynamicSecretOwner>>>();
    for (const row of rows)
      if (!owners.has(row.dynamic_secret_id))
        owners.set(row.dynamic_secret_id, await findDynamicSecretOwner(trx, row.dynamic_secret_id));
    await recordPlatformChanges(
      trx,
      ctx.deps,
      rows.map((row) => {
        const owner = owners.get(row.dynamic_secret_id);
        return {
          orgId: owner?.orgId ?? null,
          projectId: owner?.projectId ?? null,
          type: "revoke-dynamic-secret-lease",
          metadata: {
            leaseId: row.id,
            dynamicSecretId: row.dynamic_secret_id,
            ...(owner ? { dynamicSecretName: owner.name, environment: owner.environment } : {}),
            reason: reasons.get(row.id),
          },
        };
      }),
    );
    return rows;
  });
};

/**
 * Revoke one lease this caller has claimed. The row is deleted only once the provider confirms the
 * credential is gone (or the caller forces it); a failure is recorded and retried with backoff.
 * With `collect`, a revoked lease is put there for the caller to finish with others in one
 * transaction (finishRevocations) instead of on its own.
 */
export const revokeClaimedLease = async (
  ctx: ChangeContext,
  lease: LeaseRow,
  token: string,
  options: { isForced?: boolean; secret?: LoadedSecret; collect?: RevokedLease[] } = {},
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
    const revoked: RevokedLease = { lease, reason: options.isForced ? "forced" : givenUp ? "given-up" : "expired" };
    if (options.collect) {
      options.collect.push(revoked);
      return { revoked: true, row: lease };
    }
    const [deleted] = await finishRevocations(ctx, token, [revoked]);
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
