import { Migrator, sql, type Kysely } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, type DatabaseHandle } from "../../src/db/database";
import { migrationProvider } from "../../src/db/migrations";
import { subfoldersAt } from "../../src/modules/secrets/commits/folder-versions.repository";
import { createTestDatabaseUrl } from "../helpers/database";

/**
 * The upgrade path of folder versions: a database whose folders predate commits (they got "Initialized
 * folder" commits) and one created since, migrated to folder versions. No existing subfolder may look
 * added after its parent's first commit, or the first rollback after the upgrade would delete it.
 */
const BEFORE_COMMITS = "0039-secret-syncs";
const BEFORE = "0043-ssh-host-groups";
const MIGRATION = "0044-folder-versions";

let handle: DatabaseHandle;
let db: Kysely<unknown>;
const migrator = () => new Migrator({ db, provider: migrationProvider });
const run = async (statement: string) => (await sql.raw(statement).execute(db)).rows as Record<string, unknown>[];
const one = async (statement: string) => (await run(statement))[0]!;
const migrateTo = async (name: string) => {
  const { error } = await migrator().migrateTo(name);
  if (error) throw error as Error;
};

beforeAll(async () => {
  handle = await openDatabase({ databaseUrl: await createTestDatabaseUrl(), dataDir: "memory://" });
  db = handle.db as unknown as Kysely<unknown>;
  await migrateTo(BEFORE_COMMITS);
}, 120_000);
afterAll(() => handle?.close());

const ids = {} as Record<string, string>;
const insert = async (name: string, statement: string) => {
  ids[name] = (await one(`${statement} returning id`)).id as string;
};
const folder = (name: string, parent: string) =>
  insert(
    name,
    `insert into secret_folders (env_id, parent_id, name) values ('${ids.env}', '${ids[parent]}', '${name}')`,
  );
const firstCommit = async (folderId: string) =>
  String((await one(`select min(seq) as seq from folder_commits where folder_id = '${folderId}'`)).seq);
const namesAt = async (parent: string, seq: string) =>
  (await subfoldersAt(handle.db, ids[parent]!, seq)).map((f) => f.name);

describe(`migration ${MIGRATION}`, () => {
  it("gives existing folders one version each, as of their first commit, and keeps a deleted folder's history", async () => {
    await insert("org", `insert into organizations (name, slug) values ('o', 'o-folder-versions')`);
    await insert(
      "project",
      `insert into projects (org_id, name, slug, type) values ('${ids.org}', 'p', 'p', 'secret-manager')`,
    );
    await insert(
      "env",
      `insert into environments (project_id, name, slug, position) values ('${ids.project}', 'Dev', 'dev', 1)`,
    );
    await insert("root", `insert into secret_folders (env_id, name) values ('${ids.env}', 'root')`);
    await folder("app", "root");
    await folder("db", "app");
    await migrateTo(BEFORE);
    await folder("late", "root");
    const rootFirst = await firstCommit(ids.root!);
    const lateFirst = await firstCommit(ids.late!);
    expect(Number(lateFirst)).toBeGreaterThan(Number(rootFirst));

    await migrateTo(MIGRATION);
    const versions = await run(
      `select f.name, v.version, v.commit_seq, v.is_deleted from secret_folder_versions v
        join secret_folders f on f.id = v.folder_id order by f.name`,
    );
    expect(versions.map((v) => [v.name, v.version, v.commit_seq === null, v.is_deleted])).toEqual([
      ["app", 1, false, false],
      ["db", 1, false, false],
      ["late", 1, false, false],
      ["root", 1, true, false],
    ]);
    // The folders that were there when commits began were there at the root's first commit; "late" was not.
    expect(await namesAt("root", rootFirst)).toEqual(["app"]);
    expect(await namesAt("root", lateFirst)).toEqual(["app", "late"]);
    expect(await namesAt("app", await firstCommit(ids.app!))).toEqual(["db"]);

    // Deleting "app" after the upgrade: recorded in the root's commits, its history kept (and its subtree's).
    await run(`delete from secret_folders where id = '${ids.app}'`);
    const latest = String(
      (await one(`select max(seq) as seq from folder_commits where folder_id = '${ids.root}'`)).seq,
    );
    expect(await namesAt("root", latest)).toEqual(["late"]);
    expect(await namesAt("root", lateFirst)).toEqual(["app", "late"]);
    const kept = await one(
      `select count(*)::int as n from folder_commits where folder_id in ('${ids.app}', '${ids.db}')`,
    );
    expect(kept.n).toBe(2);
  });

  it("goes back down, dropping what only a gone folder held and restoring the cascades", async () => {
    await migrateTo(BEFORE);
    const orphans = await one(
      `select count(*)::int as n from folder_commits c where not exists (select 1 from secret_folders f where f.id = c.folder_id)`,
    );
    expect(orphans.n).toBe(0);
    await run(`delete from secret_folders where id = '${ids.late}'`);
    const cascaded = await one(`select count(*)::int as n from folder_commits where folder_id = '${ids.late}'`);
    expect(cascaded.n).toBe(0);
    await migrateTo(MIGRATION);
  });
});
