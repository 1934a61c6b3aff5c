import { describe, expect, it } from "vitest";
import { MUTATION_EVENTS, READ_EVENTS, failedLoginType, type AuditSpec } from "../../src/modules/audit/audit-events";
import { FAILED_LOGIN_STEPS, READ_STEPS } from "./rows/login-read-rows";
import { describeAuditRows } from "./rows/runner";

const failedSpecs = Object.fromEntries(
  Object.keys(FAILED_LOGIN_STEPS).map((operation) => {
    const spec = MUTATION_EVENTS[operation as keyof typeof FAILED_LOGIN_STEPS];
    return [operation, { ...spec, type: failedLoginType(spec.type) }];
  }),
) as Record<string, AuditSpec>;

describe("audit coverage tables of logins and reads", () => {
  it("has a refused-login row for every login operation", () => {
    const logins = Object.entries(MUTATION_EVENTS).filter(([, spec]) => spec.mode === "login");
    expect(Object.keys(FAILED_LOGIN_STEPS).sort()).toEqual(logins.map(([operation]) => operation).sort());
  });

  it("has a row for every recorded read", () => {
    expect(Object.keys(READ_STEPS).sort()).toEqual(Object.keys(READ_EVENTS).sort());
  });
});

describeAuditRows("audit coverage: refused logins", FAILED_LOGIN_STEPS, failedSpecs);
describeAuditRows("audit coverage: recorded reads", READ_STEPS, READ_EVENTS);
