import { keywardVitestConfig } from "@keyward/vitest-config";

const config = keywardVitestConfig("cli", { globalSetup: ["test/global-setup.ts"] });
// Each test starts the binary several times; on a busy 2-core machine one start can take a second.
config.test = { ...config.test, testTimeout: 60_000 };
export default config;
