import { startTestServices } from "./services";

/** Starts the real servers some suites talk to (see test/services), once per test run. */
export default async function setup() {
  return startTestServices();
}
