import { MUTATION_EVENTS } from "../../src/modules/audit/audit-events";
import { ROTATION_STEPS } from "./rows/rotation-rows";
import { describeAuditRows } from "./rows/runner";

describeAuditRows("audit coverage: secret rotations", ROTATION_STEPS, MUTATION_EVENTS);
