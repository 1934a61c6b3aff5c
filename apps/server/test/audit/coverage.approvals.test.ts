import { MUTATION_EVENTS } from "../../src/modules/audit/audit-events";
import { APPROVAL_STEPS } from "./rows/approval-rows";
import { describeAuditRows } from "./rows/runner";

describeAuditRows("audit coverage: change approvals", APPROVAL_STEPS, MUTATION_EVENTS);
