import { randomBytes } from "node:crypto";
import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { buildDeps } from "../../src/app/deps";
import { loadEnv } from "../../src/env";

describe("PGLITE_SHARED_BUFFERS", () => {
  it("defaults to PGlite's 128MB and takes only a size with its unit", () => {
    expect(loadEnv({}).PGLITE_SHARED_BUFFERS).toBe("128MB");
    expect(loadEnv({ PGLITE_SHARED_BUFFERS: "1GB" }).PGLITE_SHARED_BUFFERS).toBe("1GB");
    for (const wrong of ["16", "0MB", "16 MB", "16mb", "16MB; drop", "-1MB"])
      expect(() => loadEnv({ PGLITE_SHARED_BUFFERS: wrong }), wrong).toThrow(/PGLITE_SHARED_BUFFERS/);
  });

  it("sizes the embedded database's buffer pool, started from the migrated template", async () => {
    for (const size of ["16MB", "32MB"]) {
      const env = loadEnv({ PGLITE_SHARED_BUFFERS: size, ENCRYPTION_KEY: randomBytes(32).toString("base64") });
      const { deps, handle } = await buildDeps(env, {
        dataDir: "memory://",
        pgliteTemplate: process.env.KEYWARD_TEST_PGLITE_TEMPLATE,
      });
      try {
        expect(handle.kind).toBe("pglite");
        const { rows } = await sql<{ shared_buffers: string }>`show shared_buffers`.execute(deps.db);
        expect(rows[0]?.shared_buffers).toBe(size);
        // The migrated schema is there.
        const { rows: tables } = await sql<{ n: number }>`select count(*)::int as n from kysely_migration`.execute(
          deps.db,
        );
        expect(tables[0]?.n).toBeGreaterThan(10);
      } finally {
        await handle.close();
      }
    }
  });
});
