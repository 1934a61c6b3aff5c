/**
 * Where a first start on an empty DATA_DIR spends its time: PGlite's initdb (a new data directory),
 * then each migration; then the same start from the migrated template the build writes. `node --import tsx bench/first-start.ts [dataDir]` (default: a fresh temporary
 * directory, removed after). Not a wrk bench: run.ts runs only *.bench.ts.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Migrator } from "kysely";
import { openDatabase } from "../src/db/database";
import { writePgliteTemplate } from "../src/db/pglite-template";
import { migrationProvider } from "../src/db/migrations";

const given = process.argv[2];
const dataDir = given ?? mkdtempSync(join(tmpdir(), "keyward-first-start-"));
const started = performance.now();
const handle = await openDatabase({ dataDir });
const opened = performance.now();
console.log(`open (initdb, PGlite start) ${(opened - started).toFixed(0)} ms`);
const migrations = await migrationProvider.getMigrations();
const timings: Array<[string, number]> = [];
let last = performance.now();
const timed = Object.fromEntries(
  Object.entries(migrations).map(([name, migration]) => [
    name,
    {
      up: async (db: Parameters<typeof migration.up>[0]) => {
        last = performance.now();
        await migration.up(db);
        timings.push([name, performance.now() - last]);
      },
    },
  ]),
);
const migrator = new Migrator({ db: handle.db, provider: { getMigrations: async () => timed } });
const { error } = await migrator.migrateToLatest();
if (error) throw error;
const migrated = performance.now();
for (const [name, ms] of timings) console.log(`  ${name.padEnd(36)} ${ms.toFixed(0).padStart(6)} ms`);
const inMigrations = timings.reduce((sum, [, ms]) => sum + ms, 0);
console.log(
  `migrations ${(migrated - opened).toFixed(0)} ms (${inMigrations.toFixed(0)} ms in the migrations themselves)`,
);
await handle.close();
const closed = performance.now();
console.log(`close ${(closed - migrated).toFixed(0)} ms; total ${(closed - started).toFixed(0)} ms`);
if (!given) rmSync(dataDir, { recursive: true, force: true });

// The built server's path: a new data directory copied from the migrated template.
const scratch = mkdtempSync(join(tmpdir(), "keyward-first-start-template-"));
const template = join(scratch, "pglite-template.tar.gz");
const writing = performance.now();
await writePgliteTemplate(template);
const fromTemplate = performance.now();
console.log(`template written (build step) ${(fromTemplate - writing).toFixed(0)} ms`);
const copied = await openDatabase({ dataDir: join(scratch, "data"), template });
const copiedAt = performance.now();
const pending = (await new Migrator({ db: copied.db, provider: migrationProvider }).getMigrations()).filter(
  (m) => m.executedAt === undefined,
).length;
console.log(`open from the template ${(copiedAt - fromTemplate).toFixed(0)} ms; ${pending} migrations left`);
await copied.close();
rmSync(scratch, { recursive: true, force: true });
