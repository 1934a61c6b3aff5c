import { keywardVitestConfig } from "@keyward/vitest-config";

export default keywardVitestConfig("cli", { globalSetup: ["test/global-setup.ts"] });
