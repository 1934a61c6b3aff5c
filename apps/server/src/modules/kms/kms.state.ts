import type { Clock } from "../../context";
import { createKmsMaterialCache, type KmsMaterialCache } from "./kms-material-cache";

declare module "../../context" {
  interface AppDeps {
    /** Unwrapped KMS key versions, briefly (in memory only). */
    kmsMaterial: KmsMaterialCache;
  }
}

export const createKmsState = (clock: Clock) => ({ kmsMaterial: createKmsMaterialCache(clock) });
