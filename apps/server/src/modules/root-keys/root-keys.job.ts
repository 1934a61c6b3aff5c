import type { AppJob } from "../../context";
import { driveRotation } from "./root-key-rotation";

/** Sent by the database whenever a row of `root_keys` changes (migration 0042). */
export const ROOT_KEYS_CHANNEL = "keyward_root_keys";
/** How often an instance looks for a running rotation to drive (or one whose claimant died). */
const ROTATION_POLL_MS = 2_000;

/**
 * Keeps this process's keyring in line with `root_keys` (on every notice, and whenever listening
 * starts again, since notices may have been missed), and drives a running rotation: woken at once on
 * the instance that started it, found by the poll on the others when a claimant's lease lapses.
 */
export const rootKeysJob: AppJob = {
  name: "root-keys",
  start: (deps) => {
    const { rootKeys, logger } = deps;
    // Counted like every job's failed pass, so an HSM or database outage shows on the metrics too.
    const failed = (error: unknown, message: string) => {
      deps.metrics.jobFailures.inc({ job: "root-keys" });
      logger.warn({ err: error }, message);
    };
    const refresh = () => void rootKeys.refresh().catch((error: unknown) => failed(error, "root keys: refresh failed"));
    const stopListening = deps.listen({
      channels: [ROOT_KEYS_CHANNEL],
      onNotice: refresh,
      onListening: refresh,
      onLost: () => undefined,
      log: (error) => logger.warn({ err: error }, "root keys: the NOTIFY connection failed"),
    });
    let stopped = false;
    let timer: NodeJS.Timeout | undefined;
    let running: Promise<void> | undefined;
    let rerun = false;
    const pass = async () => {
      do {
        rerun = false;
        await driveRotation(deps);
      } while (rerun && !stopped);
    };
    const run = () => {
      clearTimeout(timer);
      if (stopped) return;
      if (running) {
        rerun = true;
        return;
      }
      running = pass()
        .catch((error: unknown) => failed(error, "root keys: the rotation pass failed"))
        .finally(() => {
          running = undefined;
          if (!stopped) timer = setTimeout(run, ROTATION_POLL_MS);
        });
    };
    const waker = run;
    rootKeys.wakers.add(waker);
    run();
    return async () => {
      stopped = true;
      rootKeys.wakers.delete(waker);
      clearTimeout(timer);
      await running;
      await stopListening();
    };
  },
};
