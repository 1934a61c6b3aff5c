import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { writePgliteTemplate } from "../../src/db/pglite-template";

/**
 * The migrated PGlite template, written once per run so that each test app's new embedded database
 * copies it instead of running initdb and every migration again (the same path a built server's first
 * start takes). Published as KEYWARD_TEST_PGLITE_TEMPLATE; nothing on a PostgreSQL run.
 */
export const startPgliteTemplate = async () => {
  if (process.env.DATABASE_URL) return () => undefined;
  const dir = mkdtempSync(join(tmpdir(), "keyward-template-"));
  const file = join(dir, "pglite-template.tar.gz");
  await writePgliteTemplate(file);
  process.env.KEYWARD_TEST_PGLITE_TEMPLATE = file;
  return () => rmSync(dir, { recursive: true, force: true });
};
