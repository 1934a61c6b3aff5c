import { Migrator, sql, type Kysely } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, type DatabaseHandle } from "../../src/db/database";
import { migrationProvider } from "../../src/db/migrations";
import { createTestDatabaseUrl } from "../helpers/database";

/**
 * The upgrade path of the approvers' table: a database at the migration before, with approvers of both
 * kinds of policy, migrated to the one table and back.
 */
const BEFORE = "0037-rotation-statements";
const MIGRATION = "0038-approval-principals";

let handle: DatabaseHandle;
let db: Kysely<unknown>;
const migrator = () => new Migrator({ db, provider: migrationProvider });
const run = async (statement: string) => (await sql.raw(statement).execute(db)).rows as Record<string, unknown>[];
const one = async (statement: string) => (await run(statement))[0]!;

beforeAll(async () => {
  handle = await openDatabase({ databaseUrl: await createTestDatabaseUrl(), dataDir: "memory://" });
  db = handle.db as unknown as Kysely<unknown>;
  const { error } = await migrator().migrateTo(BEFORE);
  if (error) throw error as Error;
}, 120_000);
afterAll(() => handle?.close());

const ids = {} as Record<string, string>;
const insert = async (name: string, statement: string) => {
  ids[name] = (await one(`${statement} returning id`)).id as string;
};

describe(`migration ${MIGRATION}`, () => {
  it("moves both kinds' approvers into one table, in order, and back", async () => {
    await insert("org", `insert into organizations (name, slug) values ('o', 'o-migration')`);
    await insert(
      "project",
      `insert into projects (org_id, name, slug, type) values ('${ids.org}', 'p', 'p', 'secret-manager')`,
    );
    for (const name of ["alice", "bob"])
      await insert(
        name,
        `insert into users (username, email, first_name, last_name, password_hash)
          values ('${name}@example.test', '${name}@example.test', '${name}', 'x', 'x')`,
      );
    await insert("robot", `insert into identities (org_id, name, org_role) values ('${ids.org}', 'robot', 'member')`);
    await insert("group", `insert into groups (org_id, name, slug) values ('${ids.org}', 'Reviewers', 'reviewers')`);
    await insert("gone", `insert into groups (org_id, name, slug) values ('${ids.org}', 'Gone', 'gone')`);
    await insert(
      "secretPolicy",
      `insert into secret_approval_policies (project_id, name, secret_path, approvals, enforcement_level,
        allowed_self_approvals, bypass_for_machine_identities)
        values ('${ids.project}', 's', '/', 1, 'hard', false, false)`,
    );
    await insert(
      "accessPolicy",
      `insert into access_approval_policies (project_id, name) values ('${ids.project}', 'a')`,
    );
    // A change policy's approvers in the order given, a bypasser, and a group deleted since.
    for (const [role, type, id] of [
      ["approver", "user", ids.bob],
      ["approver", "group", ids.group],
      ["approver", "identity", ids.robot],
      ["bypasser", "user", ids.alice],
      ["approver", "group", ids.gone],
    ])
      await run(
        `insert into secret_approval_policy_principals (policy_id, role, principal_type, principal_id)
          values ('${ids.secretPolicy}', '${role}', '${type}', '${id}')`,
      );
    await run(`delete from groups where id = '${ids.gone}'`);
    for (const [position, role, type, column, id] of [
      [1, "approver", "user", "user_id", ids.alice],
      [0, "approver", "group", "group_id", ids.group],
      [0, "bypasser", "identity", "identity_id", ids.robot],
    ])
      await insert(
        `access-${role}-${position}`,
        `insert into access_approval_policy_principals (policy_id, role, principal_type, ${column}, position)
          values ('${ids.accessPolicy}', '${role}', '${type}', '${id}', ${position})`,
      );

    const up = await migrator().migrateTo(MIGRATION);
    expect(up.error).toBeUndefined();
    const stored = await run(
      `select secret_policy_id, access_policy_id, role, principal_type,
        coalesce(user_id, identity_id, group_id) as principal_id, position, id
        from approval_policy_principals order by access_policy_id nulls first, role, position`,
    );
    expect(stored).toEqual([
      expect.objectContaining({
        secret_policy_id: ids.secretPolicy,
        role: "approver",
        principal_type: "user",
        principal_id: ids.bob,
        position: 0,
      }),
      expect.objectContaining({
        secret_policy_id: ids.secretPolicy,
        role: "approver",
        principal_type: "group",
        principal_id: ids.group,
        position: 1,
      }),
      expect.objectContaining({
        secret_policy_id: ids.secretPolicy,
        role: "approver",
        principal_type: "identity",
        principal_id: ids.robot,
        position: 2,
      }),
      expect.objectContaining({
        secret_policy_id: ids.secretPolicy,
        role: "bypasser",
        principal_type: "user",
        principal_id: ids.alice,
        position: 0,
      }),
      expect.objectContaining({
        access_policy_id: ids.accessPolicy,
        role: "approver",
        principal_type: "group",
        principal_id: ids.group,
        position: 0,
        id: ids["access-approver-0"],
      }),
      expect.objectContaining({
        access_policy_id: ids.accessPolicy,
        role: "approver",
        principal_type: "user",
        principal_id: ids.alice,
        position: 1,
        id: ids["access-approver-1"],
      }),
      expect.objectContaining({
        access_policy_id: ids.accessPolicy,
        role: "bypasser",
        principal_type: "identity",
        principal_id: ids.robot,
        position: 0,
        id: ids["access-bypasser-0"],
      }),
    ]);
    const tables = await run(
      `select table_name from information_schema.tables
        where table_name in ('secret_approval_policy_principals', 'access_approval_policy_principals')`,
    );
    expect(tables).toEqual([]);

    // A deleted person stops being an approver; a principal is named once per policy and role.
    await run(`delete from users where id = '${ids.bob}'`);
    expect(
      await one(
        `select count(*)::int as n from approval_policy_principals where secret_policy_id = '${ids.secretPolicy}'`,
      ),
    ).toEqual({ n: 3 });
    await expect(
      run(
        `insert into approval_policy_principals (access_policy_id, role, principal_type, user_id)
          values ('${ids.accessPolicy}', 'approver', 'user', '${ids.alice}')`,
      ),
    ).rejects.toThrow();
    await expect(
      run(
        `insert into approval_policy_principals (secret_policy_id, access_policy_id, role, principal_type, user_id)
          values ('${ids.secretPolicy}', '${ids.accessPolicy}', 'approver', 'user', '${ids.alice}')`,
      ),
    ).rejects.toThrow();

    const down = await migrator().migrateTo(BEFORE);
    expect(down.error).toBeUndefined();
    expect(await one(`select count(*)::int as n from secret_approval_policy_principals`)).toEqual({ n: 3 });
    expect(await run(`select id, position from access_approval_policy_principals order by role, position`)).toEqual([
      { id: ids["access-approver-0"], position: 0 },
      { id: ids["access-approver-1"], position: 1 },
      { id: ids["access-bypasser-0"], position: 0 },
    ]);
    expect((await migrator().migrateToLatest()).error).toBeUndefined();
    expect(await one(`select count(*)::int as n from approval_policy_principals`)).toEqual({ n: 6 });
  });
});
