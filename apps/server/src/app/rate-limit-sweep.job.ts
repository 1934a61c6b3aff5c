import type { AppJob } from "../context";
import { loop } from "../lib/loop";

/** Rate-limit windows that ended are deleted (on every instance; the delete is idempotent). */
export const rateLimitSweepJob: AppJob = {
  name: "rate-limit-sweep",
  start: (deps) =>
    loop(
      deps.env.RATE_LIMIT_WINDOW_MS,
      () =>
        deps.db
          .deleteFrom("rate_limit_counters")
          .where("window_start", "<", new Date(deps.clock.now() - 2 * deps.env.RATE_LIMIT_WINDOW_MS))
          .execute(),
      (error) => {
        deps.metrics.jobFailures.inc({ job: "rate-limit-sweep" });
        deps.logger.error({ err: error }, "rate-limit sweep failed");
      },
    ),
};
