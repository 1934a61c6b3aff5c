import { keywardVitestConfig } from "@keyward/vitest-config";
import { ENGINE_DEPENDENT } from "./test/engine-dependent";

export default keywardVitestConfig("server", {
  globalSetup: ["test/global-setup.ts"],
  setupFiles: ["test/helpers/secret-scan.ts"],
  // CI's PostgreSQL pass runs only the files whose outcome depends on the engine.
  include: process.env.KEYWARD_TEST_FILES === "engine-dependent" ? Object.keys(ENGINE_DEPENDENT) : undefined,
});
