import type { MutatingOperation } from "../../../src/modules/audit/audit-events";
import { ACCESS_STEPS } from "./access-rows";
import { IDENTITY_STEPS } from "./identity-rows";
import { PEOPLE_STEPS } from "./people-rows";
import { PLATFORM_STEPS } from "./platform-rows";
import type { Step } from "./runner";
import { SECRET_STEPS } from "./secret-rows";
import { ROTATION_STEPS } from "./rotation-rows";
import { APP_CONNECTION_STEPS } from "./app-connection-rows";
import { APPROVAL_STEPS } from "./approval-rows";
import { ACCESS_APPROVAL_STEPS } from "./access-approval-rows";
import { SECRET_SYNC_STEPS } from "./secret-sync-rows";
import { SSH_STEPS } from "./ssh-rows";
import { ROOT_KEY_STEPS } from "./root-key-rows";

/** One row per mutating operation of the contract: a new route without a row does not compile. */
export const MUTATION_STEPS: Record<MutatingOperation, Step> = {
  ...IDENTITY_STEPS,
  ...ACCESS_STEPS,
  ...SECRET_STEPS,
  ...PLATFORM_STEPS,
  ...PEOPLE_STEPS,
  ...ROTATION_STEPS,
  ...APP_CONNECTION_STEPS,
  ...APPROVAL_STEPS,
  ...ACCESS_APPROVAL_STEPS,
  ...SECRET_SYNC_STEPS,
  ...SSH_STEPS,
  ...ROOT_KEY_STEPS,
};
