import { describe } from "vitest";
import { fuzzEveryOperation } from "./run-cases";
import { badPathRequests } from "./transport-cases";

describe("every path parameter refuses invalid percent-encoding with a JSON 4xx", () => {
  fuzzEveryOperation("path encoding", badPathRequests);
});
