import { MUTATION_EVENTS } from "../../src/modules/audit/audit-events";
import { describeAuditRows } from "./coverage/runner";
import { SECRET_STEPS } from "./coverage/secret-rows";

describeAuditRows("audit coverage: folders, imports, secrets, tags, versions", SECRET_STEPS, MUTATION_EVENTS);
