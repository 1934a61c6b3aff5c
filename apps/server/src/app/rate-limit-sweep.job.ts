import type { AppJob } from "../context";
import { loop } from "../lib/loop";
import { deleteRateLimitCountersBefore } from "./rate-limit.repository";

/** Rate-limit windows that ended are deleted (on every instance; the delete is idempotent). */
export const rateLimitSweepJob: AppJob = {
  name: "rate-limit-sweep",
  start: (deps) =>
    loop(
      deps.env.RATE_LIMIT_WINDOW_MS,
      () => deleteRateLimitCountersBefore(deps.db, new Date(deps.clock.now() - 2 * deps.env.RATE_LIMIT_WINDOW_MS)),
      (error) => {
        deps.metrics.jobFailures.inc({ job: "rate-limit-sweep" });
        deps.logger.error({ err: error }, "rate-limit sweep failed");
      },
    ),
};
