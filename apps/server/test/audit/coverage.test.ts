import { describe, expect, it } from "vitest";
import { MUTATION_EVENTS } from "../../src/modules/audit/audit-events";
import { contractOperations } from "./rows/runner";
import { MUTATION_STEPS } from "./rows/table";

describe("audit coverage table", () => {
  it("has one row for every operation of the contract that changes something", () => {
    expect(Object.keys(MUTATION_STEPS).sort()).toEqual(contractOperations(true));
  });

  it("maps every such operation to an event", () => {
    expect(Object.keys(MUTATION_EVENTS).sort()).toEqual(contractOperations(true));
  });
});
