import { MUTATION_EVENTS } from "../../src/modules/audit/audit-events";
import { IDENTITY_STEPS } from "./coverage/identity-rows";
import { describeAuditRows } from "./coverage/runner";

describeAuditRows(
  "audit coverage: bootstrap, identities, tokens, universal and LDAP auth",
  IDENTITY_STEPS,
  MUTATION_EVENTS,
);
