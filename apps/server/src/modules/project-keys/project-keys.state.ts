import type { Clock } from "../../context";
import { createDataKeyCache, type DataKeyCache } from "./data-key-cache";

declare module "../../context" {
  interface AppDeps {
    /** Unwrapped per-project data keys, briefly (never plaintext values). */
    dataKeys: DataKeyCache;
  }
}

export const createProjectKeysState = (clock: Clock) => ({ dataKeys: createDataKeyCache(clock) });
