import type { AppDeps, AppJob } from "../context";
import { certificateRenewalJob } from "../modules/pki/certificate-renewal.job";
import { leaseRevocationJob } from "../modules/dynamic-secrets/lease-revocation.job";
import { auditFlushJob } from "../modules/audit/audit-buffer";
import { auditRetentionJob } from "../modules/audit/audit-retention";
import { auditStreamJob } from "../modules/audit/streams/stream-delivery";
import { rateLimitSweepJob } from "./rate-limit-sweep.job";
import { eventsJob } from "../modules/events/events.job";
import { secretRotationJob } from "../modules/secret-rotations/secret-rotation.job";
import { secretSyncJob } from "../modules/secret-syncs/secret-sync.job";
import { tokenUseJob } from "../modules/access-tokens/token-use.job";
import { tokenStateJob } from "../modules/access-tokens/token-state.job";
import { rootKeysJob } from "../modules/root-keys/root-keys.job";

/** Every background job of the server, listed once; main.ts puts this list into AppDeps. */
export const allJobs = (): AppJob[] => [
  leaseRevocationJob,
  certificateRenewalJob,
  rateLimitSweepJob,
  auditFlushJob,
  auditStreamJob,
  auditRetentionJob,
  eventsJob,
  secretRotationJob,
  secretSyncJob,
  tokenUseJob,
  tokenStateJob,
  rootKeysJob,
];

/** Start the jobs of `deps.jobs` (all of them, or those named); returns one stop function. */
export const startJobs = (deps: AppDeps, names?: string[]) => {
  const selected = names ? deps.jobs.filter((job) => names.includes(job.name)) : deps.jobs;
  const stops = selected.map((job) => job.start(deps));
  return async () => {
    await Promise.all(stops.map((stop) => stop()));
  };
};
