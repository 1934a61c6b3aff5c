import { MUTATION_EVENTS } from "../../src/modules/audit/audit-events";
import { describeAuditRows } from "./rows/runner";
import { SECRET_SYNC_STEPS } from "./rows/secret-sync-rows";

describeAuditRows(
  "audit coverage: secret syncs and their AWS and GitHub connections",
  SECRET_SYNC_STEPS,
  MUTATION_EVENTS,
);
