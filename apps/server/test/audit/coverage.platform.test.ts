import { MUTATION_EVENTS } from "../../src/modules/audit/audit-events";
import { PLATFORM_STEPS } from "./rows/platform-rows";
import { describeAuditRows } from "./rows/runner";

describeAuditRows(
  "audit coverage: gateways, KMS, audit settings, PKI, dynamic secrets, workload auth",
  PLATFORM_STEPS,
  MUTATION_EVENTS,
);
