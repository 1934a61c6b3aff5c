import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { keywardServerBundle } from "@keyward/test-services";

/**
 * The built server (see keywardServerBundle): files that start the real server as a process run its
 * bundle (KEYWARD_TEST_SERVER_MAIN), and each test app's new PGlite database starts from the migrated
 * template beside it instead of running initdb and every migration again: the archive
 * (KEYWARD_TEST_PGLITE_TEMPLATE) or, cheaper, a copy of it unpacked (KEYWARD_TEST_PGLITE_TEMPLATE_DIR, see
 * helpers/database.ts); both left unset on a PostgreSQL run.
 */
export const startServerBundle = async () => {
  const bundle = await keywardServerBundle();
  process.env.KEYWARD_TEST_SERVER_MAIN = bundle.main;
  if (process.env.DATABASE_URL) return () => undefined;
  process.env.KEYWARD_TEST_PGLITE_TEMPLATE = bundle.template;
  process.env.KEYWARD_TEST_PGLITE_TEMPLATE_DIR = bundle.templateDir;
  // The run's embedded databases, in memory where the machine has a tmpfs; removed with the run,
  // whatever a test left behind.
  const scratch = mkdtempSync(join(existsSync("/dev/shm") ? "/dev/shm" : tmpdir(), "keyward-test-databases-"));
  process.env.KEYWARD_TEST_PGLITE_SCRATCH = scratch;
  return () => rmSync(scratch, { recursive: true, force: true });
};
