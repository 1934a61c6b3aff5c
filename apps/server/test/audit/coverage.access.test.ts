import { MUTATION_EVENTS } from "../../src/modules/audit/audit-events";
import { ACCESS_STEPS } from "./rows/access-rows";
import { describeAuditRows } from "./rows/runner";

describeAuditRows("audit coverage: projects, roles, privileges, templates, groups", ACCESS_STEPS, MUTATION_EVENTS);
