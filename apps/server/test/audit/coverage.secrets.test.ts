import { MUTATION_EVENTS } from "../../src/modules/audit/audit-events";
import { describeAuditRows } from "./rows/runner";
import { SECRET_STEPS } from "./rows/secret-rows";

describeAuditRows("audit coverage: folders, imports, secrets, tags, versions", SECRET_STEPS, MUTATION_EVENTS);
