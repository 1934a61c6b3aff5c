import { MUTATION_EVENTS } from "../../src/modules/audit/audit-events";
import { IDENTITY_STEPS } from "./rows/identity-rows";
import { describeAuditRows } from "./rows/runner";

describeAuditRows(
  "audit coverage: bootstrap, identities, tokens, universal and LDAP auth",
  IDENTITY_STEPS,
  MUTATION_EVENTS,
);
