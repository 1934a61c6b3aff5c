import { MUTATION_EVENTS } from "../../src/modules/audit/audit-events";
import { PEOPLE_STEPS } from "./rows/people-rows";
import { describeAuditRows } from "./rows/runner";

describeAuditRows("audit coverage: people, single sign-on and sessions", PEOPLE_STEPS, MUTATION_EVENTS);
