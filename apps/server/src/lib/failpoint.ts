import type { Env } from "../env";

export type Failpoint =
  | "lease-after-intent"
  | "lease-after-provider"
  | "revoke-after-claim"
  | "revoke-after-provider"
  | "rotation-after-intent"
  | "rotation-after-password"
  | "rotation-before-secrets"
  | "rotation-before-active";

/**
 * Crash-safety tests name a point (KEYWARD_FAILPOINT) where the process kills itself with SIGKILL,
 * exactly as a power cut would: no cleanup, no finally blocks. Unset in production.
 */
export const failpoint = (env: Pick<Env, "KEYWARD_FAILPOINT">, point: Failpoint) => {
  if (env.KEYWARD_FAILPOINT === point) process.kill(process.pid, "SIGKILL");
};
