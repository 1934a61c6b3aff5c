import type { AppJob } from "../../context";
import { runAutoRenewPass } from "./certificate-auto-renew";
import { loop } from "../../lib/loop";

/** Automatic certificate renewal for profiles with apiConfig.autoRenew, on every instance. */
export const certificateRenewalJob: AppJob = {
  name: "certificate-renewal",
  start: (deps) =>
    loop(
      deps.env.CERT_RENEWAL_INTERVAL_MS,
      () => runAutoRenewPass(deps),
      (error) => {
        deps.metrics.jobFailures.inc({ job: "certificate-renewal" });
        deps.logger.error({ err: error }, "certificate renewal pass failed");
      },
    ),
};
