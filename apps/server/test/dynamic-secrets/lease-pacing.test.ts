import { randomUUID } from "node:crypto";
import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import type { AppDeps } from "../../src/context";
import { openDatabase } from "../../src/db/database";
import { runRevocationPass } from "../../src/modules/dynamic-secrets/revocation-pass";
import { getTestApp } from "../helpers/app";
import { createIdentity, expectOk } from "../helpers/tenant";
import {
  breakRootRole,
  createRootRole,
  createScope,
  createSqlSecret,
  mendRootRole,
  roleExists,
  scopeOf,
  targetQuery,
  type LeaseScope,
} from "./helpers";

/**
 * `count` live leases of the secret, seeded in bulk as the bench does: rows named as Keyward names
 * them, and the same roles made on the target, so revocation really drops them.
 */
const seedLeases = async (deps: AppDeps, dynamicSecretId: string, count: number) => {
  const { entity_prefix: prefix } = await deps.db
    .selectFrom("dynamic_secrets")
    .select("entity_prefix")
    .where("id", "=", dynamicSecretId)
    .executeTakeFirstOrThrow();
  const rows = Array.from({ length: count }, () => {
    const id = randomUUID();
    return {
      id,
      dynamic_secret_id: dynamicSecretId,
      external_entity_id: `${prefix}_${id.replace(/-/g, "")}`,
      expire_at: new Date(Date.now() + 3_600_000),
      state: "active" as const,
    };
  });
  await deps.db.insertInto("dynamic_secret_leases").values(rows).execute();
  await targetQuery(rows.map((row) => `create role "${row.external_entity_id}"`).join("; "));
  return rows.map((row) => row.external_entity_id);
};

/** As if they had expired two minutes ago (the server stopped meanwhile). */
const expireAll = (deps: AppDeps, dynamicSecretId: string) =>
  deps.db
    .updateTable("dynamic_secret_leases")
    .set({ expire_at: sql<Date>`now() - interval '2 minutes'` })
    .where("dynamic_secret_id", "=", dynamicSecretId)
    .execute();

const withConcurrency = (deps: AppDeps, concurrency: number): AppDeps => ({
  ...deps,
  env: { ...deps.env, LEASE_REVOCATION_CONCURRENCY: concurrency, LEASE_REVOCATION_INTERVAL_MS: 50 },
});

const pausedState = (deps: AppDeps, id: string) =>
  deps.db
    .selectFrom("dynamic_secrets")
    .select(["revocation_failures", "revocation_paused_until"])
    .where("id", "=", id)
    .executeTakeFirstOrThrow();

describe("paced lease revocation", () => {
  it("revokes every due lease exactly once with two instances racing, at most CONCURRENCY at a time each", async () => {
    const app = await getTestApp();
    await targetQuery("create schema if not exists keyward_test");
    await targetQuery(
      "create table if not exists keyward_test.paced (username text not null, started timestamptz, ended timestamptz)",
    );
    const scope = await createScope();
    const secret = await createSqlSecret(
      scope,
      {},
      {
        revocationStatement: `INSERT INTO keyward_test.paced VALUES ('{{username}}', clock_timestamp()); SELECT pg_sleep(0.03); UPDATE keyward_test.paced SET ended = clock_timestamp() WHERE username = '{{username}}'; DROP ROLE IF EXISTS "{{username}}"`,
      },
    );
    const names = await seedLeases(app.deps, secret.id, 24);
    // A second instance: its own connection pool on PostgreSQL; on PGlite the one connection is shared.
    const second = app.deps.env.DATABASE_URL
      ? await openDatabase({ databaseUrl: app.deps.env.DATABASE_URL })
      : undefined;
    const one = withConcurrency(app.deps, 2);
    const other = withConcurrency(second ? { ...app.deps, db: second.db } : app.deps, 2);
    try {
      await expireAll(app.deps, secret.id);
      await Promise.all([runRevocationPass(one), runRevocationPass(other)]);
      await runRevocationPass(one);
    } finally {
      await second?.close();
    }
    const logged = await targetQuery<{ username: string; count: string }>(
      "select username, count(*)::text as count from keyward_test.paced where username = any($1) group by username",
      [names],
    );
    expect(logged).toHaveLength(24);
    expect(logged.every((row) => row.count === "1")).toBe(true);
    // The most revocations that overlapped in time: two instances with a concurrency of two each.
    const [overlap] = await targetQuery<{ most: number }>(
      `select max((select count(*) from keyward_test.paced b where b.username = any($1)
          and b.started <= a.started and b.ended > a.started))::int as most
         from keyward_test.paced a where a.username = any($1)`,
      [names],
    );
    expect(overlap!.most).toBeLessThanOrEqual(4);
    for (const name of names.slice(0, 3)) expect(await roleExists(name)).toBe(false);
    const left = await app.deps.db
      .selectFrom("dynamic_secret_leases")
      .select("id")
      .where("dynamic_secret_id", "=", secret.id)
      .execute();
    expect(left).toHaveLength(0);
  }, 60_000);

  it("pauses a secret whose target refuses, keeping its leases due with few failed calls, and revokes them on recovery", async () => {
    const app = await getTestApp();
    const deps = withConcurrency(app.deps, 2);
    const scope = await createScope();
    const root = await createRootRole();
    const secret = await createSqlSecret(scope, {}, { username: root.name, password: root.password });
    const names = await seedLeases(app.deps, secret.id, 12);
    await breakRootRole(root.name);
    await expireAll(app.deps, secret.id);

    await runRevocationPass(deps);
    const afterFailure = await deps.db
      .selectFrom("dynamic_secret_leases")
      .select(["state", "attempts", "claim_token"])
      .where("dynamic_secret_id", "=", secret.id)
      .execute();
    expect(afterFailure).toHaveLength(12);
    // One wave was tried (two calls), the rest handed back untried and unclaimed.
    expect(afterFailure.reduce((sum, row) => sum + row.attempts, 0)).toBeLessThanOrEqual(2);
    expect(afterFailure.every((row) => row.claim_token === null)).toBe(true);
    const paused = await pausedState(deps, secret.id);
    expect(paused.revocation_failures).toBe(1);
    expect(new Date(paused.revocation_paused_until!).getTime()).toBeGreaterThan(Date.now());
    // While paused, a pass leaves the secret alone.
    expect(await runRevocationPass(deps)).toBe(0);

    await mendRootRole(root.name, root.password);
    // The failed wave's own (per-lease) backoff is skipped too, as if its time had passed.
    await deps.db
      .updateTable("dynamic_secret_leases")
      .set({ next_attempt_at: sql<Date>`now() - interval '1 second'` })
      .where("dynamic_secret_id", "=", secret.id)
      .where("next_attempt_at", "is not", null)
      .execute();
    await deps.db
      .updateTable("dynamic_secrets")
      .set({ revocation_paused_until: sql<Date>`now() - interval '1 second'` })
      .where("id", "=", secret.id)
      .execute();
    expect(await runRevocationPass(deps)).toBe(12);
    expect(await pausedState(deps, secret.id)).toMatchObject({ revocation_failures: 0, revocation_paused_until: null });
    for (const name of names.slice(0, 3)) expect(await roleExists(name)).toBe(false);
  });
});

describe("GET /api/v1/dynamic-secrets/:name/leases, paged", () => {
  const listed = (scope: LeaseScope, name: string, page: { offset?: number; limit?: number }) =>
    scope.tenant.admin.dynamicSecrets.listLeases({ params: { name }, query: { ...scopeOf(scope), ...page } });

  it("pages in creation order with the total beside it, refuses bad bounds and answers 403 without lease", async () => {
    const app = await getTestApp();
    const scope = await createScope();
    const secret = await createSqlSecret(scope);
    await app.deps.db
      .insertInto("dynamic_secret_leases")
      .values(
        Array.from({ length: 5 }, (_, i) => ({
          id: randomUUID(),
          dynamic_secret_id: secret.id,
          external_entity_id: `listed_${i}`,
          expire_at: new Date(Date.now() + 3_600_000),
          state: "active" as const,
          created_at: new Date(Date.now() - 60_000 + i * 1000),
        })),
      )
      .execute();

    const all = expectOk(await listed(scope, secret.name, {}));
    expect(all.totalCount).toBe(5);
    expect(all.leases.map((l) => l.externalEntityId)).toEqual([
      "listed_0",
      "listed_1",
      "listed_2",
      "listed_3",
      "listed_4",
    ]);
    const page = expectOk(await listed(scope, secret.name, { offset: 1, limit: 2 }));
    expect(page).toMatchObject({ totalCount: 5 });
    expect(page.leases.map((l) => l.externalEntityId)).toEqual(["listed_1", "listed_2"]);
    expect(expectOk(await listed(scope, secret.name, { offset: 4 })).leases).toHaveLength(1);
    expect(expectOk(await listed(scope, secret.name, { offset: 9, limit: 10 }))).toEqual({ leases: [], totalCount: 5 });

    for (const bad of [{ limit: 0 }, { limit: 1001 }, { offset: -1 }, { limit: 1.5 }])
      expect((await listed(scope, secret.name, bad)).status).toBe(422);
    const viewer = await createIdentity(scope.tenant, { projectId: scope.projectId, projectRole: "viewer" });
    expect(
      (
        await viewer.client.dynamicSecrets.listLeases({
          params: { name: secret.name },
          query: { ...scopeOf(scope), offset: 0, limit: 2 },
        })
      ).status,
    ).toBe(403);
  });
});
