import { keywardVitestConfig } from "@keyward/vitest-config";

export default keywardVitestConfig("server", {
  globalSetup: ["test/global-setup.ts"],
  setupFiles: ["test/helpers/secret-scan.ts"],
});
