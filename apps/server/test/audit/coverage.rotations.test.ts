import { MUTATION_EVENTS } from "../../src/modules/audit/audit-events";
import { APP_CONNECTION_STEPS } from "./rows/app-connection-rows";
import { ROTATION_STEPS } from "./rows/rotation-rows";
import { describeAuditRows } from "./rows/runner";

describeAuditRows(
  "audit coverage: app connections and secret rotations",
  { ...APP_CONNECTION_STEPS, ...ROTATION_STEPS },
  MUTATION_EVENTS,
);
