import { MUTATION_EVENTS } from "../../src/modules/audit/audit-events";
import { ACCESS_STEPS } from "./coverage/access-rows";
import { describeAuditRows } from "./coverage/runner";

describeAuditRows("audit coverage: projects, roles, privileges, templates, groups", ACCESS_STEPS, MUTATION_EVENTS);
