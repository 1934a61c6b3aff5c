import { describe } from "vitest";
import { fuzzEveryOperation } from "./run-cases";
import { badBodyRequests } from "./transport-cases";

describe("every operation with a body refuses bad encodings, sizes and Unicode with a JSON 4xx", () => {
  fuzzEveryOperation("body encoding", badBodyRequests);
});
