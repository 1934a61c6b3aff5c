import { MUTATION_EVENTS } from "../../src/modules/audit/audit-events";
import { describeAuditRows } from "./rows/runner";
import { ROOT_KEY_STEPS } from "./rows/root-key-rows";

describeAuditRows("audit coverage: the root key", ROOT_KEY_STEPS, MUTATION_EVENTS);
