import { defineConfig } from "vitest/config";

/**
 * Shared vitest settings. HTTP suites share one database per worker, so a couple of forks is
 * plenty on a 2-core machine; when KEYWARD_TEST_REPORT_DIR is set each package also writes a JSON
 * report there so CI can total the results.
 * @param {string} name
 * @param {{ setupFiles?: string[]; globalSetup?: string[]; include?: string[] }} [extra]
 */
export const keywardVitestConfig = (name, extra = {}) => {
  const reportDir = process.env.KEYWARD_TEST_REPORT_DIR;
  return defineConfig({
    test: {
      name,
      include: extra.include ?? ["src/**/*.test.ts", "test/**/*.test.ts"],
      pool: "forks",
      // Files in a worker share one app and database (a new PGlite costs ~2 s and 800 MiB).
      isolate: false,
      maxWorkers: 2,
      testTimeout: 30_000,
      hookTimeout: 120_000,
      setupFiles: extra.setupFiles ?? [],
      globalSetup: extra.globalSetup ?? [],
      reporters: reportDir ? ["default", "json"] : ["default"],
      outputFile: reportDir ? { json: `${reportDir}/${name}.json` } : undefined,
    },
  });
};
