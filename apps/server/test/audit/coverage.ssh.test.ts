import { MUTATION_EVENTS } from "../../src/modules/audit/audit-events";
import { describeAuditRows } from "./rows/runner";
import { SSH_STEPS } from "./rows/ssh-rows";

describeAuditRows("audit coverage: SSH CAs, templates, certificates and hosts", SSH_STEPS, MUTATION_EVENTS);
