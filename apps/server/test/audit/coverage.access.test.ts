import { describe } from "vitest";
import { MUTATION_EVENTS } from "../../src/modules/audit/audit-events";
import { ACCESS_STEPS } from "./coverage/access-rows";
import { auditRow } from "./coverage/runner";

describe("audit coverage: projects, roles, privileges, templates, groups", () => {
  for (const [operation, step] of Object.entries(ACCESS_STEPS)) {
    auditRow(operation, MUTATION_EVENTS[operation as keyof typeof ACCESS_STEPS], step);
  }
});
