import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, type DatabaseHandle } from "../../src/db/database";

/** The embedded engine's statements: prepared once, bound each time, answered as node-postgres would. */
describe("PGlite prepared statements (the embedded engine whatever the run's database)", () => {
  let handle: DatabaseHandle;
  beforeAll(async () => {
    handle = await openDatabase({
      dataDir: "memory://",
      template: process.env.KEYWARD_TEST_PGLITE_TEMPLATE,
      sharedBuffers: "16MB",
    });
  });
  afterAll(() => handle.close());

  it("sends values and reads rows as the PostgreSQL path does", async () => {
    const when = new Date("2026-01-02T03:04:05.678Z");
    const bytes = Buffer.from([0, 1, 254, 255]);
    for (let round = 0; round < 7; round++) {
      const { rows } = await sql<{ big: string; doc: unknown; raw: Uint8Array; list: string[]; at: Date; none: null }>`
        select ${"9007199254740993"}::int8 as big, ${JSON.stringify({ a: [1, "x"] })}::jsonb as doc,
               ${bytes}::bytea as raw, ${["a", "b,c", null]}::text[] as list, ${when}::timestamptz as at,
               ${null}::text as none`.execute(handle.db);
      expect(rows).toHaveLength(1);
      const [row] = rows as [(typeof rows)[number]];
      expect(row.big).toBe("9007199254740993");
      expect(row.doc).toEqual({ a: [1, "x"] });
      expect(Buffer.from(row.raw).equals(bytes)).toBe(true);
      expect(row.list).toEqual(["a", "b,c", null]);
      expect(row.at.toISOString()).toBe(when.toISOString());
      expect(row.none).toBeNull();
    }
  });

  it("reports errors with their codes and keeps serving the same statement afterwards", async () => {
    await sql`create temporary table t_unique (k text primary key)`.execute(handle.db);
    const insert = (k: string) => sql`insert into t_unique (k) values (${k})`.execute(handle.db);
    await insert("a");
    await expect(insert("a")).rejects.toMatchObject({ code: "23505" });
    expect(Number((await insert("b")).numAffectedRows)).toBe(1);
    // A statement that never parses is not remembered: the next, valid one runs.
    await expect(sql`selec ${1}`.execute(handle.db)).rejects.toMatchObject({ code: "42601" });
    await expect(sql`selec ${1}`.execute(handle.db)).rejects.toMatchObject({ code: "42601" });
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from t_unique where k <> ${"z"}`.execute(
      handle.db,
    );
    expect(rows[0]?.n).toBe(2);
  });

  it("keeps at most 500 statements prepared, closing the least recently used", async () => {
    for (let i = 0; i < 650; i++) {
      const { rows } = await sql<{ v: number }>`select ${i}::int + ${sql.lit(i)} as v`.execute(handle.db);
      expect(rows[0]?.v).toBe(2 * i);
    }
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_prepared_statements`.execute(handle.db);
    expect(rows[0]?.n).toBeLessThanOrEqual(501);
    expect(rows[0]?.n).toBeGreaterThan(400);
  });
});
