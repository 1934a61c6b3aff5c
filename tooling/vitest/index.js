import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";
import { BaseSequencer } from "vitest/node";

const RUN_TMPDIR = fileURLToPath(new URL("./run-tmpdir.js", import.meta.url));

/**
 * Vitest's order (unknown and larger files first), except that the files named in `slowFirst` start
 * first, in the listed order: a file that waits on processes for a minute then runs beside the short
 * ones instead of alone at the end.
 * @param {string[]} slowFirst file paths relative to the package root
 */
const slowFirstSequencer = (slowFirst) =>
  class extends BaseSequencer {
    /** @param {import("vitest/node").TestSpecification[]} files */
    async sort(files) {
      const sorted = await super.sort(files);
      const rank = (spec) => {
        const index = slowFirst.findIndex((path) => spec.moduleId.endsWith(`/${path}`));
        return index === -1 ? slowFirst.length : index;
      };
      return sorted
        .map((spec, order) => ({ spec, order, rank: rank(spec) }))
        .sort((a, b) => a.rank - b.rank || a.order - b.order)
        .map(({ spec }) => spec);
    }
  };

/**
 * Shared vitest settings. HTTP suites share one database per worker, so a couple of forks is
 * plenty on a 2-core machine; when KEYWARD_TEST_REPORT_DIR is set each package also writes a JSON
 * report there so CI can total the results.
 * @param {string} name
 * @param {{ setupFiles?: string[]; globalSetup?: string[]; include?: string[]; slowFirst?: string[] }} [extra]
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
      // KEYWARD_TEST_WORKERS: more for a run whose files mostly wait (CI's PostgreSQL pass).
      maxWorkers: Number(process.env.KEYWARD_TEST_WORKERS ?? 2),
      testTimeout: 30_000,
      hookTimeout: 120_000,
      setupFiles: extra.setupFiles ?? [],
      // First, so the run's own setup (servers it starts) already has the run's TMPDIR, and is torn down before it.
      globalSetup: [RUN_TMPDIR, ...(extra.globalSetup ?? [])],
      sequence: { sequencer: slowFirstSequencer(extra.slowFirst ?? []) },
      reporters: reportDir ? ["default", "json"] : ["default"],
      outputFile: reportDir ? { json: `${reportDir}/${name}.json` } : undefined,
    },
  });
};
