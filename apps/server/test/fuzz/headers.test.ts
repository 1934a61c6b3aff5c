import { describe } from "vitest";
import { fuzzEveryOperation } from "./run-cases";
import { badHeaderRequests } from "./transport-cases";

describe("every operation refuses non-Bearer credentials and oversized headers with a JSON 4xx", () => {
  fuzzEveryOperation("headers", badHeaderRequests);
});
