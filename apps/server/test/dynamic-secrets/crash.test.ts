import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "kysely";
import { afterAll, describe, expect, it } from "vitest";
import { createTestDatabaseUrl } from "../helpers/database";
import { expectOk } from "../helpers/tenant";
import { sqlInputs, targetQuery, waitUntil } from "./helpers";
import { killServer, spawnServer, withDatabase, type ServerProcess, type Storage } from "./server-process";

const scope = { projectSlug: "", environmentSlug: "dev", path: "/" };

const rolesWithMarker = async (marker: string) =>
  (await targetQuery<{ rolname: string }>("select rolname from pg_roles where strpos(rolname, $1) > 0", [marker])).map(
    (r) => r.rolname,
  );

const leaseRows = (storage: Storage) =>
  withDatabase(storage, (db) =>
    db.selectFrom("dynamic_secret_leases").select(["id", "state", "external_entity_id"]).execute(),
  );

/** The crash-safety invariant: every credential on the target belongs to a lease row. */
const expectNoLoginWithoutLease = async (storage: Storage, marker: string) => {
  const roles = await rolesWithMarker(marker);
  const rows = await leaseRows(storage);
  for (const role of roles) expect(rows.map((r) => r.external_entity_id)).toContain(role);
  return { roles, rows };
};

/** A lease request against a server set to die on the way: the connection drops, no answer comes. */
const leaseUntilDeath = async (server: ServerProcess, token: string, name: string) => {
  const response = await server
    .client(token)
    .dynamicSecretLeases.create({ body: { ...scope, dynamicSecretName: name } })
    .catch((error: unknown) => error);
  await server.exited;
  expect(response).toBeInstanceOf(Error);
};

describe("crash safety of leases (the real server, killed and restarted)", () => {
  const cleanup: (() => Promise<void> | void)[] = [];
  afterAll(async () => {
    for (const step of cleanup.reverse()) await step();
  });

  it(
    "leaves no working login without a lease row at any kill point, and revokes what expired while down",
    { timeout: 240_000 },
    async () => {
      const dataDir = mkdtempSync(join(tmpdir(), "keyward-crash-"));
      cleanup.push(() => rmSync(dataDir, { recursive: true, force: true }));
      const storage: Storage = {
        dataDir,
        databaseUrl: await createTestDatabaseUrl(),
        encryptionKey: randomBytes(32).toString("base64"),
      };
      const start = async (failpoint?: string) => {
        const server = await spawnServer(storage, failpoint ? { KEYWARD_FAILPOINT: failpoint } : {});
        cleanup.push(() => killServer(server));
        return server;
      };

      // 1. A healthy server: bootstrap, a project, a PostgreSQL dynamic secret and a lease.
      const first = await start();
      const boot = expectOk(
        await first.client().system.bootstrap({
          body: { email: "crash@keyward.test", password: "crash-password", organization: "Crash" },
        }),
      );
      const token = boot.identity.credentials.token;
      const admin = first.client(token);
      scope.projectSlug = expectOk(await admin.projects.create({ body: { projectName: "crash" } })).project.slug;
      const secret = expectOk(
        await admin.dynamicSecrets.create({
          body: { ...scope, name: "db", provider: { type: "sql-database", inputs: sqlInputs() }, defaultTTL: "1h" },
        }),
      ).dynamicSecret;
      const { lease, data } = expectOk(
        await admin.dynamicSecretLeases.create({ body: { ...scope, dynamicSecretName: "db" } }),
      );
      // Every credential of this secret carries its marker: `kw_<8 characters>_`.
      const marker = `${data.DB_USERNAME!.split("_").slice(0, 2).join("_")}_`;
      expect(marker).toMatch(/^kw_[a-z0-9]{8}_$/);
      await killServer(first);

      // 2. While no server runs, the lease expires (its role would still accept logins until VALID UNTIL).
      await withDatabase(storage, (db) =>
        db
          .updateTable("dynamic_secret_leases")
          .set({ expire_at: sql<Date>`now() - interval '5 seconds'` })
          .where("id", "=", lease.id)
          .execute(),
      );
      const second = await start("lease-after-intent");
      await waitUntil(
        "the lease that expired while down to be revoked",
        async () => !(await rolesWithMarker(marker)).includes(data.DB_USERNAME!),
        30_000,
        250,
      );
      expect(Date.now() - second.startedAt).toBeLessThan(30_000);

      // 3. Killed after committing the intent, before the credential exists.
      await leaseUntilDeath(second, token, secret.name);
      const afterIntent = await expectNoLoginWithoutLease(storage, marker);
      expect(afterIntent.rows.filter((r) => r.state === "creating")).toHaveLength(1);
      expect(afterIntent.roles).toHaveLength(0);

      // 4. Killed after the credential was made, before the lease was activated: the row still accounts for it.
      const third = await start("lease-after-provider");
      await leaseUntilDeath(third, token, secret.name);
      const afterProvider = await expectNoLoginWithoutLease(storage, marker);
      expect(afterProvider.roles).toHaveLength(1);

      // 5. Killed by the job itself between dropping a credential and deleting its row.
      const fourth = await start("revoke-after-provider");
      await Promise.race([
        fourth.exited,
        new Promise((_resolve, reject) =>
          setTimeout(() => reject(new Error("the job never reached its failpoint")), 60_000),
        ),
      ]);
      await expectNoLoginWithoutLease(storage, marker);

      // 6. A healthy restart reconciles everything within 30 s: no credential and no pending lease remain.
      const fifth = await start();
      await waitUntil(
        "every abandoned lease to be cleaned up",
        async () => {
          if ((await rolesWithMarker(marker)).length > 0) return false;
          const listed = await fifth.client(token).dynamicSecrets.listLeases({ params: { name: "db" }, query: scope });
          return listed.status === 200 && listed.body.leases.length === 0;
        },
        30_000,
        250,
      );
      const cleanAfterMs = Date.now() - fifth.startedAt;
      await killServer(fifth);
      expect(await leaseRows(storage)).toEqual([]);
      expect(cleanAfterMs).toBeLessThan(30_000);
    },
  );
});
