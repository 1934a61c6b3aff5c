import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Kysely } from "kysely";
import { PGliteDialect } from "./pglite-dialect";
import { migrateToLatest } from "./database";
import type { DB } from "./schema";

/**
 * Where the built server keeps its template: beside the bundle in dist/, written by the build. Run from
 * source there is none, and a new database runs initdb and the migrations.
 */
export const PGLITE_TEMPLATE = fileURLToPath(new URL("./pglite-template.tar.gz", import.meta.url));

/**
 * A new in-memory database with every migration applied and nothing else (no instance key, no row),
 * dumped as PGlite's gzipped data directory: each new embedded database copies it instead of running
 * initdb and the migrations again.
 */
export const writePgliteTemplate = async (file: string) => {
  const pglite = await import("@electric-sql/pglite");
  const { PGlite } = pglite;
  const client = new PGlite();
  await client.waitReady;
  const db = new Kysely<DB>({ dialect: new PGliteDialect(client, pglite) });
  try {
    await migrateToLatest(db);
    const dump = await client.dumpDataDir("gzip");
    writeFileSync(file, Buffer.from(await dump.arrayBuffer()));
  } finally {
    await db.destroy();
  }
};
