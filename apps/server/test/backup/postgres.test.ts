import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createFreshDatabase } from "@keyward/test-services";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSecretBox } from "../../src/crypto/envelope";
import { knownMigrations, migrateInSession, openPostgresSession } from "../../src/db/session";
import { writeFileAtomically } from "../../src/lib/atomic-file";
import { exportFromSession } from "../../src/modules/backup/backup-export";
import { spawnKeyward, stopKeyward, type Spawned } from "../runtime/spawn";
import { newKey, readAsIdentity, runServerCommand, seedInstance, verifyAudit, type Seeded } from "./commands";

/**
 * The documented way from one process to many: an embedded instance's backup restored into an empty
 * PostgreSQL 15 database (the run's target server, whatever database the suite itself uses), and back.
 */
const key = newKey();
const dir = mkdtempSync(join(tmpdir(), "keyward-backup-pg-"));
const sourceDir = join(dir, "source");
let source: Spawned;
let seeded: Seeded;
let databaseUrl: string;

const adminUrl = () => {
  const url = process.env.KEYWARD_TEST_PG_TARGET_URL;
  if (!url) throw new Error("KEYWARD_TEST_PG_TARGET_URL is not set: the global setup starts PostgreSQL 15");
  return url;
};

beforeAll(async () => {
  [source, databaseUrl] = await Promise.all([
    spawnKeyward({ DATA_DIR: sourceDir, ENCRYPTION_KEY: key }),
    createFreshDatabase(adminUrl(), "keyward_restore"),
  ]);
  seeded = await seedInstance(source);
}, 60_000);

afterAll(async () => {
  if (source) await stopKeyward(source);
  rmSync(dir, { recursive: true, force: true });
});

describe("an embedded instance moved to PostgreSQL", { timeout: 120_000 }, () => {
  it("restores into an empty PostgreSQL database, serves the same credentials there, and backs up and restores back", async () => {
    const file = join(dir, "from-pglite.kwb");
    const backup = await runServerCommand(["backup", "--out", file], { DATA_DIR: sourceDir, ENCRYPTION_KEY: key });
    expect(backup.stderr).toBe("");
    expect(backup.code).toBe(0);

    const pgEnv = { DATABASE_URL: databaseUrl, ENCRYPTION_KEY: key, DATA_DIR: join(dir, "pg-node") };
    const restored = await runServerCommand(["restore", "--in", file], pgEnv);
    expect(restored.stderr).toBe("");
    expect(restored.code).toBe(0);
    expect(restored.stdout).toMatch(/^restored .* into PostgreSQL: \d+ rows in \d+ tables; [1-9]\d* data keys/);

    const server = await spawnKeyward({ ...pgEnv, WORKERS: "1" }, { bootstrap: false });
    try {
      expect(await readAsIdentity(server, seeded)).toMatchObject(seeded.secrets);
      expect(await verifyAudit(server, source.rootToken)).toMatchObject({ valid: true });
      // Written to on PostgreSQL, then backed up from there while it serves.
      const admin = server.client(source.rootToken);
      const where = { projectId: seeded.projectId, environment: "dev", secretPath: "/" };
      expect(
        (await admin.secretsV4.create({ params: { secretName: "ON_POSTGRES" }, body: { ...where, secretValue: "pg" } }))
          .status,
      ).toBe(200);
      const back = join(dir, "from-postgres.kwb");
      const [fromPg, again] = await Promise.all([
        runServerCommand(["backup", "--out", back], pgEnv),
        runServerCommand(["restore", "--in", file], pgEnv),
      ]);
      expect(fromPg.stderr).toBe("");
      expect(fromPg.stdout).toMatch(/\(postgres, migration \d{4}-/);
      expect(again.code).not.toBe(0);
      expect(again.stderr).toMatch(/^restore refused: the database at DATABASE_URL is not empty .*\n$/);

      // And back into an embedded database: the restore opens every data key and value and verifies the chains.
      const home = join(dir, "home-again");
      const returned = await runServerCommand(["restore", "--in", back], { DATA_DIR: home, ENCRYPTION_KEY: key });
      expect(returned.stderr).toBe("");
      expect(returned.stdout).toMatch(/^restored .* into DATA_DIR .*: \d+ rows in \d+ tables; [1-9]\d* data keys/);
    } finally {
      await stopKeyward(server);
    }
  });

  it("restores a backup of an older schema at its own migration, then runs the later ones", async () => {
    const migrations = await knownMigrations();
    const older = migrations.at(-2)!;
    const file = join(dir, "older.kwb");
    const [sourceUrl, targetUrl] = await Promise.all([
      createFreshDatabase(adminUrl(), "keyward_older"),
      createFreshDatabase(adminUrl(), "keyward_older"),
    ]);
    // An instance one migration behind, with a row to carry, backed up through a session of its own.
    const session = await openPostgresSession(sourceUrl);
    try {
      await migrateInSession(session.db, older);
      await session.db.insertInto("organizations").values({ name: "Older", slug: "older" }).execute();
      const secretBox = createSecretBox(Buffer.from(key, "base64"));
      await writeFileAtomically(file, (out) =>
        exportFromSession(session.db, { kind: "postgres", keyward: "older", secretBox }, out),
      );
    } finally {
      await session.close();
    }
    const restored = await runServerCommand(["restore", "--in", file], {
      DATABASE_URL: targetUrl,
      ENCRYPTION_KEY: key,
    });
    expect(restored.stderr).toBe("");
    expect(restored.stdout).toMatch(/: 1 rows in \d+ tables;/);
    const target = await openPostgresSession(targetUrl);
    try {
      const applied = await target.db
        .selectFrom("kysely_migration" as never)
        .select("name" as never)
        .execute();
      expect(applied.map((row) => (row as { name: string }).name).sort()).toEqual(migrations);
      expect(await target.db.selectFrom("organizations").select("slug").execute()).toEqual([{ slug: "older" }]);
    } finally {
      await target.close();
    }
  });

  it("opens every value sealed under the root key before success, and refuses a file with one that does not open", async () => {
    const [sourceUrl, goodTarget, badTarget] = await Promise.all([
      createFreshDatabase(adminUrl(), "keyward_sealed"),
      createFreshDatabase(adminUrl(), "keyward_sealed"),
      createFreshDatabase(adminUrl(), "keyward_sealed"),
    ]);
    const good = join(dir, "sealed-good.kwb");
    const bad = join(dir, "sealed-bad.kwb");
    const secretBox = createSecretBox(Buffer.from(key, "base64"));
    const session = await openPostgresSession(sourceUrl);
    let connectionId = "";
    try {
      await migrateInSession(session.db);
      const org = await session.db
        .insertInto("organizations")
        .values({ name: "Sealed", slug: "sealed" })
        .returning("id")
        .executeTakeFirstOrThrow();
      const sealed = await session.db
        .insertInto("app_connections")
        .values({
          org_id: org.id,
          app: "aws",
          name: "aws",
          method: "access-key",
          encrypted_credentials: "pending",
          credentials_hash: "h",
        })
        .returning("id")
        .executeTakeFirstOrThrow();
      connectionId = sealed.id;
      const seal = async (context: string) => {
        await session.db
          .updateTable("app_connections")
          .set({ encrypted_credentials: secretBox.encrypt("{}", context) })
          .where("id", "=", connectionId)
          .execute();
      };
      const exportTo = (file: string) =>
        writeFileAtomically(file, (out) =>
          exportFromSession(session.db, { kind: "postgres", keyward: "test", secretBox }, out),
        );
      await seal(`app_connections:${connectionId}:credentials`);
      await exportTo(good);
      // The same credentials sealed for another row: they do not open here.
      await seal(`app_connections:${randomUUID()}:credentials`);
      await exportTo(bad);
    } finally {
      await session.close();
    }
    const restored = await runServerCommand(["restore", "--in", good], {
      DATABASE_URL: goodTarget,
      ENCRYPTION_KEY: key,
    });
    expect(restored.stderr).toBe("");
    expect(restored.stdout).toMatch(/ and 1 other sealed values opened;/);
    const refused = await runServerCommand(["restore", "--in", bad], { DATABASE_URL: badTarget, ENCRYPTION_KEY: key });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr.trim()).toBe(
      `restore refused: app_connections.encrypted_credentials of ${connectionId} does not open under this ENCRYPTION_KEY; nothing was restored`,
    );
    const target = await openPostgresSession(badTarget);
    try {
      const { rows } = await sql<{
        n: number;
      }>`select count(*)::int as n from pg_tables where schemaname = 'public'`.execute(target.db);
      expect(rows[0]!.n).toBe(0);
    } finally {
      await target.close();
    }
  });
});
