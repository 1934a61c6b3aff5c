import type { AppDeps, AppJob } from "../../context";
import { runRevocationPass } from "./revocation-pass";
import { sweepOrphanCredentials } from "./orphan-sweeper";
import { loop } from "../../lib/loop";

/** How often the orphan sweeper lists credentials on the targets (it also runs at start-up). */
const SWEEP_EVERY_MS = 5 * 60_000;

/**
 * Lease revocation, on every instance: a pass at start-up (leases that expired while no server ran)
 * and then every LEASE_REVOCATION_INTERVAL_MS; the orphan sweeper runs beside it on its own loop so
 * an unreachable target never delays revocations.
 */
export const startLeaseRevocation = (deps: AppDeps, options: { intervalMs?: number; sweepEveryMs?: number } = {}) => {
  const stopRevoking = loop(
    options.intervalMs ?? deps.env.LEASE_REVOCATION_INTERVAL_MS,
    () => runRevocationPass(deps),
    (error) => {
      deps.metrics.jobFailures.inc({ job: "lease-revocation" });
      deps.logger.error({ err: error }, "lease revocation pass failed");
    },
  );
  const sweepEveryMs = options.sweepEveryMs ?? SWEEP_EVERY_MS;
  // A target swept by any instance within most of a period is not swept again by this one.
  const stopSweeping = loop(
    sweepEveryMs,
    () => sweepOrphanCredentials(deps, sweepEveryMs * 0.9),
    (error) => {
      deps.metrics.jobFailures.inc({ job: "orphan-sweep" });
      deps.logger.error({ err: error }, "orphan credential sweep failed");
    },
  );
  return async () => {
    await Promise.all([stopRevoking(), stopSweeping()]);
  };
};

export const leaseRevocationJob: AppJob = { name: "lease-revocation", start: (deps) => startLeaseRevocation(deps) };
