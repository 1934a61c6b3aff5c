import { keywardVitestConfig } from "@keyward/vitest-config";

const config = keywardVitestConfig("web", { globalSetup: ["test/global-setup.ts"] });
// One browser and one server for the whole run: a single worker, and generous waits on a busy machine.
config.test = { ...config.test, maxWorkers: 1, testTimeout: 90_000, hookTimeout: 180_000 };
export default config;
