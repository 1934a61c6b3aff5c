import { MUTATION_EVENTS } from "../../src/modules/audit/audit-events";
import { PLATFORM_STEPS } from "./coverage/platform-rows";
import { describeAuditRows } from "./coverage/runner";

describeAuditRows(
  "audit coverage: gateways, KMS, audit settings, PKI, dynamic secrets, workload auth",
  PLATFORM_STEPS,
  MUTATION_EVENTS,
);
