import { MUTATION_EVENTS } from "../../src/modules/audit/audit-events";
import { ACCESS_APPROVAL_STEPS } from "./rows/access-approval-rows";
import { describeAuditRows } from "./rows/runner";

describeAuditRows("audit coverage: access approvals", ACCESS_APPROVAL_STEPS, MUTATION_EVENTS);
