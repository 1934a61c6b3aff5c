import { randomUUID } from "node:crypto";
import type { AppDeps } from "../../context";
import { inTransaction } from "../../db/transaction";
import { deleteDrainedDynamicSecrets, pauseRevocations, resumeRevocations } from "./dynamic-secret.repository";
import {
  backoffBaseSeconds,
  backoffMaxSeconds,
  claimSeconds,
  creatingGraceSeconds,
  finishRevocations,
  loadSecret,
  revokeClaimedLease,
  type LoadedSecret,
  type RevokedLease,
} from "./lease-revoker";
import { claimLockedLeases, lockDueLeases, releaseUntriedClaims, type LeaseRow } from "./lease.repository";

/** A round claims up to this many waves of LEASE_REVOCATION_CONCURRENCY leases. */
const WAVES = 4;
/**
 * No provider call starts later than this after the claim: it then ends (CONNECTOR_DEADLINE_MS)
 * before the claim lapses, so no other instance can take the lease meanwhile. Leases left when a
 * slow target makes a round outlast it are handed back untried.
 */
const startWithinMs = (deps: AppDeps) => claimSeconds(deps) * 1000 - deps.env.CONNECTOR_DEADLINE_MS - 1_000;
/** How long one pass keeps starting rounds; the job's interval then passes before the next one. */
const PASS_BUDGET_MS = 10_000;

const claimBatch = (deps: AppDeps, token: string, batch: number) =>
  inTransaction(deps.db, async (trx) => {
    const due = await lockDueLeases(trx, batch, creatingGraceSeconds(deps), new Date(deps.clock.now()));
    return due.length === 0
      ? []
      : claimLockedLeases(
          trx,
          due.map((row) => row.id),
          token,
          claimSeconds(deps),
        );
  });

const groupBySecret = (leases: LeaseRow[]) => {
  const groups = new Map<string, LeaseRow[]>();
  for (const lease of leases) {
    const group = groups.get(lease.dynamic_secret_id);
    if (group) group.push(lease);
    else groups.set(lease.dynamic_secret_id, [lease]);
  }
  return groups;
};

/**
 * One secret's claimed leases, at most LEASE_REVOCATION_CONCURRENCY at a time. At the first
 * provider failure nothing more is started: the leases not yet tried are handed back (still due)
 * and the whole secret is paused with exponential backoff, so a target that is down sees one
 * failed call per wave rather than one per due lease.
 */
const revokeGroup = async (
  deps: AppDeps,
  dynamicSecretId: string,
  leases: LeaseRow[],
  token: string,
  secret: LoadedSecret,
  startBy: number,
) => {
  const queue = [...leases];
  const untried: string[] = [];
  const revoked: RevokedLease[] = [];
  let failed = false;
  let succeeded = false;
  const worker = async () => {
    for (let lease = queue.shift(); lease; lease = queue.shift()) {
      if (failed || Date.now() > startBy) {
        untried.push(lease.id);
        continue;
      }
      try {
        const outcome = await revokeClaimedLease({ deps }, lease, token, { secret, collect: revoked });
        if (outcome.revoked) succeeded = true;
        else {
          failed = true;
          deps.metrics.jobFailures.inc({ job: "lease-revocation" });
        }
      } catch (error) {
        // The claim lapses and a later pass retries; one bad lease must not stop the others.
        deps.metrics.jobFailures.inc({ job: "lease-revocation" });
        deps.logger.error({ err: error, leaseId: lease.id }, "lease revocation crashed");
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(deps.env.LEASE_REVOCATION_CONCURRENCY, leases.length) }, worker));
  // The rows of the credentials taken back go together, with their events, in one transaction.
  for (const row of await finishRevocations({ deps }, token, revoked))
    deps.metrics.leaseRevocationLag.observe(Math.max(0, deps.clock.now() - row.expire_at.getTime()) / 1e3);
  await releaseUntriedClaims(deps.db, untried, token);
  if (failed) {
    const paused = await pauseRevocations(deps.db, dynamicSecretId, backoffBaseSeconds(deps), backoffMaxSeconds(deps));
    deps.logger.warn(
      { dynamicSecretId, failuresInARow: paused?.revocation_failures, until: paused?.revocation_paused_until },
      "revocations of a dynamic secret paused after a provider failure",
    );
  } else if (succeeded) await resumeRevocations(deps.db, dynamicSecretId);
};

/**
 * One pass of the revocation job: claim due leases in rounds (FOR UPDATE SKIP LOCKED, so instances
 * share the work and never take the same lease), revoke each secret's share with bounded
 * concurrency, then remove the dynamic secrets whose deletion was waiting on them. A pass stops
 * starting rounds after its budget, so a large backlog is worked through pass after pass with the
 * job's interval between them. Returns how many leases were handled.
 */
export const runRevocationPass = async (deps: AppDeps, options: { maxRounds?: number; budgetMs?: number } = {}) => {
  const batch = deps.env.LEASE_REVOCATION_CONCURRENCY * WAVES;
  const deadline = Date.now() + (options.budgetMs ?? PASS_BUDGET_MS);
  const secrets = new Map<string, Promise<LoadedSecret>>();
  let handled = 0;
  for (let round = 0; round < (options.maxRounds ?? Infinity) && Date.now() < deadline; round += 1) {
    const token = randomUUID();
    const startBy = Date.now() + startWithinMs(deps);
    const claimed = await claimBatch(deps, token, batch);
    if (claimed.length === 0) break;
    await Promise.all(
      [...groupBySecret(claimed)].map(async ([dynamicSecretId, leases]) => {
        let secret = secrets.get(dynamicSecretId);
        if (!secret) secrets.set(dynamicSecretId, (secret = loadSecret(deps, dynamicSecretId)));
        try {
          await revokeGroup(deps, dynamicSecretId, leases, token, await secret, startBy);
        } catch (error) {
          // Inputs that cannot be read (or the database failing): the claims lapse and a later pass retries.
          secrets.delete(dynamicSecretId);
          deps.metrics.jobFailures.inc({ job: "lease-revocation" });
          deps.logger.error({ err: error, dynamicSecretId }, "lease revocation crashed");
        }
      }),
    );
    handled += claimed.length;
    if (claimed.length < batch) break;
  }
  await deleteDrainedDynamicSecrets(deps.db);
  return handled;
};
