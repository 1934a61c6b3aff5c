import { cpSync, existsSync, mkdtempSync } from "node:fs";
import { join } from "node:path";
import { createFreshDatabase } from "@keyward/test-services";

/**
 * A database of its own for a test worker: a fresh PostgreSQL database on the DATABASE_URL server,
 * or undefined for PGlite.
 */
export const createTestDatabaseUrl = async (): Promise<string | undefined> => {
  const adminUrl = process.env.DATABASE_URL;
  return adminUrl ? createFreshDatabase(adminUrl, "keyward_test") : undefined;
};

/**
 * A new PGlite data directory (`<dir>/pgdata`, as DATA_DIR lays it out) already holding the migrated
 * template: a copy of the unpacked template in the run's scratch folder (test/services/server-bundle.ts),
 * which a start opens as it is. Undefined where there is none (a PostgreSQL run sets neither variable;
 * a file run without the global setup). Opening it costs about half the CPU of PGlite unpacking the
 * archive at every start.
 */
export const seededPgliteDir = (): string | undefined => {
  const template = process.env.KEYWARD_TEST_PGLITE_TEMPLATE_DIR;
  const scratch = process.env.KEYWARD_TEST_PGLITE_SCRATCH;
  if (!template || !scratch || !existsSync(template)) return undefined;
  const dir = mkdtempSync(join(scratch, "db-"));
  cpSync(template, join(dir, "pgdata"), { recursive: true });
  return dir;
};
