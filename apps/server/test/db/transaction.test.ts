import { describe, expect, it } from "vitest";
import { migrationProvider } from "../../src/db/migrations";
import { afterCommit, CONFLICT_RETRIES, inTransaction } from "../../src/db/transaction";
import { sql } from "kysely";
import { getTestApp } from "../helpers/app";
import { createProject, createTenant, expectOk, uniqueName } from "../helpers/tenant";
import { withTrigger } from "../helpers/triggers";

describe("inTransaction and afterCommit", () => {
  it("runs side effects once the change is committed, and never for a rolled-back one", async () => {
    const { deps } = await getTestApp();
    const tenant = await createTenant();
    const seen: string[] = [];
    const committed = uniqueName("committed");
    await inTransaction(deps.db, async (trx) => {
      await trx.updateTable("organizations").set({ name: committed }).where("id", "=", tenant.orgId).execute();
      afterCommit(trx, () => seen.push("committed"));
      expect(seen).toEqual([]);
    });
    expect(seen).toEqual(["committed"]);

    await expect(
      inTransaction(deps.db, async (trx) => {
        await trx.updateTable("organizations").set({ name: "rolled-back" }).where("id", "=", tenant.orgId).execute();
        afterCommit(trx, () => seen.push("rolled back"));
        throw new Error("abort");
      }),
    ).rejects.toThrow("abort");
    expect(seen).toEqual(["committed"]);
    const org = await deps.db
      .selectFrom("organizations")
      .select("name")
      .where("id", "=", tenant.orgId)
      .executeTakeFirst();
    expect(org?.name).toBe(committed);
  });

  it("refuses afterCommit on a transaction it did not open", async () => {
    const { deps } = await getTestApp();
    await expect(deps.db.transaction().execute(async (trx) => afterCommit(trx, () => undefined))).rejects.toThrow(
      /inTransaction/,
    );
  });
});

/** What PostgreSQL throws at the victim of a deadlock (code 40P01), without staging one. */
const deadlockVictim = () => Object.assign(new Error("deadlock detected"), { code: "40P01" });

describe("inTransaction after a deadlock or a serialization failure", () => {
  it("runs the transaction again: only the attempt that commits is written and sees its side effects", async () => {
    const { deps } = await getTestApp();
    const tenant = await createTenant();
    const seen: string[] = [];
    let attempts = 0;
    const result = await inTransaction(deps.db, async (trx) => {
      attempts += 1;
      const name = uniqueName(`attempt-${attempts}`);
      await trx.updateTable("organizations").set({ name }).where("id", "=", tenant.orgId).execute();
      afterCommit(trx, () => seen.push(name));
      if (attempts === 1) throw deadlockVictim();
      if (attempts === 2) throw Object.assign(new Error("could not serialize access"), { code: "40001" });
      return name;
    });
    expect(attempts).toBe(3);
    expect(seen).toEqual([result]);
    const org = await deps.db
      .selectFrom("organizations")
      .select("name")
      .where("id", "=", tenant.orgId)
      .executeTakeFirstOrThrow();
    expect(org.name).toBe(result);
  });

  it("gives up after a bounded number of retries, and never retries other errors", async () => {
    const { deps } = await getTestApp();
    let attempts = 0;
    await expect(
      inTransaction(deps.db, async () => {
        attempts += 1;
        throw deadlockVictim();
      }),
    ).rejects.toMatchObject({ code: "40P01" });
    expect(attempts).toBe(CONFLICT_RETRIES + 1);

    attempts = 0;
    await expect(
      inTransaction(deps.db, async () => {
        attempts += 1;
        throw Object.assign(new Error("duplicate key"), { code: "23505" });
      }),
    ).rejects.toMatchObject({ code: "23505" });
    expect(attempts).toBe(1);
  });

  it("a request whose transaction is once a deadlock's victim succeeds, with its change and one audit event", async () => {
    const tenant = await createTenant();
    const project = await createProject(tenant);
    const { role } = expectOk(
      await tenant.admin.roles.create({
        params: { projectId: project.id },
        body: { slug: uniqueName("r"), name: "R", permissions: [] },
      }),
    );
    const db = tenant.app.deps.db;
    // A sequence is not transactional: it counts attempts across the rollback of the first.
    const attempts = `s_${uniqueName("attempts").replace(/-/g, "_")}`;
    await sql.raw(`create sequence ${attempts}`).execute(db);
    const drop = await withTrigger(
      db,
      "project_roles",
      "before update",
      `if old.id = '${role.id}' and nextval('${attempts}') = 1 then
         raise exception 'deadlock detected' using errcode = '40P01';
       end if;
       return new;`,
    );
    const updates = () =>
      db
        .selectFrom("audit_logs")
        .select((eb) => eb.fn.countAll<string>().as("n"))
        .where("project_id", "=", project.id)
        .where("event_type", "=", "update-project-role")
        .executeTakeFirstOrThrow();
    try {
      const res = await tenant.admin.roles.update({
        params: { projectId: project.id, roleId: role.id },
        body: { name: "Renamed" },
      });
      expect(expectOk(res).role.name).toBe("Renamed");
    } finally {
      await drop();
    }
    const { rows } = await sql<{ n: string }>`select last_value::text as n from ${sql.raw(attempts)}`.execute(db);
    await sql.raw(`drop sequence ${attempts}`).execute(db);
    expect(rows[0]!.n).toBe("2");
    expect(Number((await updates()).n)).toBe(1);
  });

  it("two transactions locking two rows in opposite orders both commit (PostgreSQL)", async (ctx) => {
    const { deps } = await getTestApp();
    // PGlite has one connection: the two would run one after the other and never meet.
    if (deps.dbKind !== "postgres") return ctx.skip();
    const [first, second] = [await createTenant(), await createTenant()];
    let attempts = 0;
    let locked = 0;
    let bothLocked: () => void = () => undefined;
    const meet = new Promise<void>((resolve) => (bothLocked = resolve));
    const rename = (order: string[], name: string) =>
      inTransaction(deps.db, async (trx) => {
        attempts += 1;
        await trx.updateTable("organizations").set({ name }).where("id", "=", order[0]!).execute();
        // Only the first attempts wait for each other: each then holds the row the other wants next.
        if (attempts <= 2 && ++locked === 2) bothLocked();
        if (attempts <= 2) await meet;
        await trx.updateTable("organizations").set({ name }).where("id", "=", order[1]!).execute();
      });
    await Promise.all([
      rename([first.orgId, second.orgId], uniqueName("a")),
      rename([second.orgId, first.orgId], uniqueName("b")),
    ]);
    // Both committed: PostgreSQL aborted one of the two as the deadlock's victim, and it ran again
    // (on a loaded machine a retry may meet the survivor once more before it commits).
    expect(attempts).toBeGreaterThanOrEqual(3);
    expect(attempts).toBeLessThanOrEqual(2 + CONFLICT_RETRIES);
  }, 20_000);
});

describe("migration registry", () => {
  it("lists migrations in the order they run", async () => {
    const names = Object.keys(await migrationProvider.getMigrations());
    expect(names).toEqual([...names].sort());
  });
});
