import { randomUUID } from "node:crypto";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AppDeps } from "../../src/context";
import { openDatabase } from "../../src/db/database";
import { startLeaseRevocation } from "../../src/modules/dynamic-secrets/lease-revocation.job";
import { runRevocationPass } from "../../src/modules/dynamic-secrets/revocation-pass";
import { sweepOrphanCredentials } from "../../src/modules/dynamic-secrets/orphan-sweeper";
import { ENTITY_PAGE } from "../../src/modules/dynamic-secrets/providers/entity-pages";
import { getTestApp } from "../helpers/app";
import { expectOk } from "../helpers/tenant";
import {
  breakRootRole,
  canLogin,
  createRootRole,
  mendRootRole,
  createScope,
  createSqlSecret,
  leaseOf,
  roleExists,
  scopeOf,
  targetQuery,
  waitUntil,
  type LeaseScope,
} from "./helpers";

/** Pretend time passed: the lease's expiry moves to the past (the role's VALID UNTIL does not, so only revocation can end it). */
const expireNow = (deps: AppDeps, leaseId: string) =>
  deps.db
    .updateTable("dynamic_secret_leases")
    .set({ expire_at: sql<Date>`now() - interval '1 second'` })
    .where("id", "=", leaseId)
    .execute();

const leaseRow = (deps: AppDeps, leaseId: string) =>
  deps.db
    .selectFrom("dynamic_secret_leases")
    .select(["state", "status", "status_details", "attempts", "next_attempt_at", "updated_at", "claim_token"])
    .where("id", "=", leaseId)
    .executeTakeFirst();

const entityPrefix = async (deps: AppDeps, dynamicSecretId: string) =>
  (
    await deps.db
      .selectFrom("dynamic_secrets")
      .select("entity_prefix")
      .where("id", "=", dynamicSecretId)
      .executeTakeFirstOrThrow()
  ).entity_prefix;

describe("the revocation job", () => {
  let deps: AppDeps;
  let stop: () => Promise<void>;

  beforeAll(async () => {
    deps = (await getTestApp()).deps;
    stop = startLeaseRevocation(
      { ...deps, env: { ...deps.env, LEASE_REVOCATION_INTERVAL_MS: 200 } },
      { sweepEveryMs: 3_600_000 },
    );
  });
  afterAll(async () => {
    await stop();
  });

  it("revokes an expired lease and removes its row", async () => {
    const scope = await createScope();
    const secret = await createSqlSecret(scope);
    const { lease, data } = await leaseOf(scope, secret.name);
    expect(await canLogin(data.DB_USERNAME!, data.DB_PASSWORD!)).toBe(true);
    await expireNow(deps, lease.id);
    await waitUntil("the role to be dropped", async () => !(await roleExists(data.DB_USERNAME!)), 10_000);
    expect(await canLogin(data.DB_USERNAME!, data.DB_PASSWORD!)).toBe(false);
    await waitUntil("the lease row to go", async () => (await leaseRow(deps, lease.id)) === undefined, 5_000);
  });

  it("retries a failing revocation with growing backoff, shows it in status, and finishes once the target recovers", async () => {
    const scope = await createScope();
    const root = await createRootRole();
    const secret = await createSqlSecret(scope, {}, { username: root.name, password: root.password });
    const { lease, data } = await leaseOf(scope, secret.name);
    await breakRootRole(root.name);
    await expireNow(deps, lease.id);

    await waitUntil(
      "a second failed attempt",
      async () => ((await leaseRow(deps, lease.id))?.attempts ?? 0) >= 2,
      10_000,
    );
    const row = (await leaseRow(deps, lease.id))!;
    expect(row).toMatchObject({ state: "revoking", status: "Failed to delete" });
    expect(row.status_details).toContain("password authentication failed");
    expect(row.status_details).not.toContain(root.password);
    const shown = expectOk(
      await scope.tenant.admin.dynamicSecretLeases.get({ params: { leaseId: lease.id }, query: scopeOf(scope) }),
    ).lease;
    expect(shown.status).toBe("Failed to delete");
    expect(await canLogin(data.DB_USERNAME!, data.DB_PASSWORD!)).toBe(true);

    // Backoff: the wait scheduled after each failure doubles (0.4 s, 0.8 s, 1.6 s ... from twice the
    // interval). Both timestamps are written by the statement that records the failure, so the gap
    // is exact once the attempt is no longer claimed.
    const gapAfter = async (attempts: number) => {
      let gap = Number.NaN;
      await waitUntil(
        `failed attempt ${attempts}`,
        async () => {
          const row = await leaseRow(deps, lease.id);
          if (!row || row.attempts !== attempts || row.claim_token !== null) return false;
          gap = new Date(row.next_attempt_at!).getTime() - new Date(row.updated_at).getTime();
          return true;
        },
        15_000,
      );
      return gap;
    };
    const third = await gapAfter(3);
    const fourth = await gapAfter(4);
    expect(fourth).toBeGreaterThan(third);

    await mendRootRole(root.name, root.password);
    await waitUntil(
      "the lease to be revoked after recovery",
      async () => (await leaseRow(deps, lease.id)) === undefined,
      15_000,
    );
    expect(await roleExists(data.DB_USERNAME!)).toBe(false);
  });

  it("takes every lease back before deleting a dynamic secret (status Deleting meanwhile)", async () => {
    const scope = await createScope();
    const secret = await createSqlSecret(scope);
    const leases = await Promise.all([leaseOf(scope, secret.name), leaseOf(scope, secret.name)]);
    const deleted = expectOk(
      await scope.tenant.admin.dynamicSecrets.delete({ params: { name: secret.name }, body: scopeOf(scope) }),
    );
    expect(deleted.dynamicSecret.status).toBe("Deleting");
    const refused = await scope.tenant.admin.dynamicSecretLeases.create({
      body: { ...scopeOf(scope), dynamicSecretName: secret.name },
    });
    expect(refused.status).toBe(400);
    await waitUntil(
      "the secret to be gone",
      async () =>
        (await scope.tenant.admin.dynamicSecrets.get({ params: { name: secret.name }, query: scopeOf(scope) }))
          .status === 404,
      10_000,
    );
    for (const { data } of leases) expect(await roleExists(data.DB_USERNAME!)).toBe(false);
  });

  it("frees the name at once on a forced delete, yet still takes the handed-out credentials back", async () => {
    const scope = await createScope();
    const secret = await createSqlSecret(scope);
    const { data } = await leaseOf(scope, secret.name);
    const deleted = expectOk(
      await scope.tenant.admin.dynamicSecrets.delete({
        params: { name: secret.name },
        body: { ...scopeOf(scope), isForced: true },
      }),
    );
    expect(deleted.dynamicSecret.id).toBe(secret.id);
    expect(
      (await scope.tenant.admin.dynamicSecrets.get({ params: { name: secret.name }, query: scopeOf(scope) })).status,
    ).toBe(404);
    expect((await createSqlSecret(scope, { name: secret.name })).name).toBe(secret.name);
    await waitUntil(
      "the forced secret's role to be dropped",
      async () => !(await roleExists(data.DB_USERNAME!)),
      10_000,
    );
    await waitUntil(
      "the forced secret to be removed",
      async () =>
        (await deps.db.selectFrom("dynamic_secrets").select("id").where("id", "=", secret.id).executeTakeFirst()) ===
        undefined,
      5_000,
    );
  });

  it("revokes the leases of a dynamic secret whose folder was deleted, then forgets the secret", async () => {
    const scope = await createScope();
    expectOk(
      await scope.tenant.admin.folders.create({
        body: { workspaceId: scope.projectId, environment: "dev", path: "/", name: "team" },
      }),
    );
    const nested: LeaseScope = { ...scope, path: "/team" };
    const secret = await createSqlSecret(nested);
    const { data } = await leaseOf(nested, secret.name);
    expectOk(
      await scope.tenant.admin.folders.delete({
        params: { folderIdOrName: "team" },
        body: { workspaceId: scope.projectId, environment: "dev", path: "/" },
      }),
    );
    await waitUntil(
      "the detached secret's role to be dropped",
      async () => !(await roleExists(data.DB_USERNAME!)),
      10_000,
    );
    await waitUntil(
      "the detached secret to be removed",
      async () =>
        (await deps.db.selectFrom("dynamic_secrets").select("id").where("id", "=", secret.id).executeTakeFirst()) ===
        undefined,
      5_000,
    );
  });
});

describe("claims and the orphan sweeper", () => {
  it("never revokes the same lease twice when two runners race", async () => {
    const app = await getTestApp();
    await targetQuery("create schema if not exists keyward_test");
    await targetQuery("create table if not exists keyward_test.revocations (username text not null)");
    const scope = await createScope();
    const secret = await createSqlSecret(
      scope,
      {},
      {
        revocationStatement: `INSERT INTO keyward_test.revocations VALUES ('{{username}}'); DROP ROLE IF EXISTS "{{username}}"`,
      },
    );
    const leases = [];
    for (let i = 0; i < 20; i += 1) leases.push(await leaseOf(scope, secret.name));
    await app.deps.db
      .updateTable("dynamic_secret_leases")
      .set({ expire_at: sql<Date>`now() - interval '1 second'` })
      .where("dynamic_secret_id", "=", secret.id)
      .execute();

    // A second instance: its own connection pool on PostgreSQL; on PGlite the one connection is shared.
    const second = app.deps.env.DATABASE_URL
      ? await openDatabase({ databaseUrl: app.deps.env.DATABASE_URL })
      : undefined;
    const other: AppDeps = second ? { ...app.deps, db: second.db } : app.deps;
    try {
      await Promise.all([
        runRevocationPass(app.deps),
        runRevocationPass(other),
        runRevocationPass(app.deps),
        runRevocationPass(other),
      ]);
      await runRevocationPass(app.deps);
    } finally {
      await second?.close();
    }
    const names = leases.map((l) => l.data.DB_USERNAME!);
    const logged = await targetQuery<{ username: string; count: string }>(
      "select username, count(*)::text as count from keyward_test.revocations where username = any($1) group by username",
      [names],
    );
    expect(logged).toHaveLength(20);
    expect(logged.every((row) => row.count === "1")).toBe(true);
    for (const name of names) expect(await roleExists(name)).toBe(false);
  });

  it("removes a credential whose lease row is gone, and leaves leased ones alone", async () => {
    const app = await getTestApp();
    const scope = await createScope();
    const root = await createRootRole();
    const secret = await createSqlSecret(scope, {}, { username: root.name, password: root.password });
    const kept = await leaseOf(scope, secret.name);
    const dropped = await leaseOf(scope, secret.name);

    // The target is unreachable for the root credential; a forced revoke drops the row anyway.
    await breakRootRole(root.name);
    const forced = await scope.tenant.admin.dynamicSecretLeases.delete({
      params: { leaseId: dropped.lease.id },
      body: { ...scopeOf(scope), isForced: true },
    });
    expect(forced.status).toBe(200);
    expect(await canLogin(dropped.data.DB_USERNAME!, dropped.data.DB_PASSWORD!)).toBe(true);

    // A stray that carries the secret's marker but a lease id that never existed.
    const prefix = await entityPrefix(app.deps, secret.id);
    const stray = `${prefix}_${"ab".repeat(16)}`;
    await targetQuery(`create role "${stray}" login password 'stray-password'`);

    await mendRootRole(root.name, root.password);
    expect(await sweepOrphanCredentials(app.deps)).toBeGreaterThanOrEqual(2);
    expect(await roleExists(dropped.data.DB_USERNAME!)).toBe(false);
    expect(await roleExists(stray)).toBe(false);
    expect(await canLogin(kept.data.DB_USERNAME!, kept.data.DB_PASSWORD!)).toBe(true);
  });

  it("sweeps a target of more than a page of credentials, once per period however often it is asked", async () => {
    const app = await getTestApp();
    const scope = await createScope();
    const secret = await createSqlSecret(scope);
    const prefix = await entityPrefix(app.deps, secret.id);
    // A page and a half of live leases, seeded in bulk: rows here, roles on the target.
    const ids = Array.from({ length: ENTITY_PAGE + ENTITY_PAGE / 2 }, () => randomUUID());
    const nameOf = (id: string) => `${prefix}_${id.replaceAll("-", "")}`;
    await app.deps.db
      .insertInto("dynamic_secret_leases")
      .values(
        ids.map((id) => ({
          id,
          dynamic_secret_id: secret.id,
          external_entity_id: nameOf(id),
          expire_at: new Date(Date.now() + 3_600_000),
          state: "active" as const,
        })),
      )
      .execute();
    const roles = async (names: string[], statement: "create" | "drop") =>
      targetQuery(
        `do $$ declare n text; begin foreach n in array $arr$${`{${names.join(",")}}`}$arr$::text[] loop
           execute format('${statement} role %I', n); end loop; end $$`,
      );
    await roles(ids.map(nameOf), "create");
    // Strays sorting before every lease and after them all (on the second page).
    const [first, last, later] = ["0", "f", "e"].map((digit) => `${prefix}_${digit.repeat(32)}`);
    await roles([first!, last!], "create");

    expect(await sweepOrphanCredentials(app.deps, 60_000)).toBeGreaterThanOrEqual(2);
    expect(await roleExists(first!)).toBe(false);
    expect(await roleExists(last!)).toBe(false);
    const left = await targetQuery<{ n: string }>(
      "select count(*)::text as n from pg_roles where strpos(rolname, $1) = 1",
      [`${prefix}_`],
    );
    expect(Number(left[0]!.n)).toBe(ids.length);

    // Swept less than a period ago (by this instance or another): not listed again until the period ends.
    await roles([later!], "create");
    await sweepOrphanCredentials(app.deps, 60_000);
    expect(await roleExists(later!)).toBe(true);
    await sweepOrphanCredentials(app.deps, 0);
    expect(await roleExists(later!)).toBe(false);
    await roles(ids.map(nameOf), "drop");
  });
});
