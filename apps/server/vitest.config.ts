import { keywardVitestConfig } from "@keyward/vitest-config";
import { ENGINE_DEPENDENT } from "./test/engine-dependent";

export default keywardVitestConfig("server", {
  globalSetup: ["test/global-setup.ts"],
  setupFiles: ["test/helpers/secret-scan.ts"],
  // CI's PostgreSQL pass runs only the files whose outcome depends on the engine.
  include: process.env.KEYWARD_TEST_FILES === "engine-dependent" ? Object.keys(ENGINE_DEPENDENT) : undefined,
  // The files that run longest (mostly waiting on processes they start) begin first, longest first.
  slowFirst: [
    "test/dynamic-secrets/crash.test.ts",
    "test/secret-rotations/crash-safety.test.ts",
    "test/runtime/start-command.test.ts",
    "test/runtime/database-outage-cluster.test.ts",
    "test/app/readme-quickstart.test.ts",
    "test/audit/stream-restart.test.ts",
    "test/backup/postgres.test.ts",
    "test/backup/pglite.test.ts",
    "test/runtime/shutdown.test.ts",
    "test/fuzz/generated-inputs.test.ts",
    "test/audit/coverage.platform.test.ts",
    "test/events/instances.test.ts",
    "test/audit/coverage.logins-reads.test.ts",
    "test/runtime/port-in-use.test.ts",
    "test/dynamic-secrets/revocation.test.ts",
  ],
});
