import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "kysely";
import { afterAll, describe, expect, it } from "vitest";
import { createTestDatabaseUrl } from "../helpers/database";
import { expectOk } from "../helpers/tenant";
import { sqlInputs, targetQuery, waitUntil } from "./helpers";
import {
  ldapEntriesWithMarker,
  ldapInputs,
  mariadbUsersWithMarker,
  mysqlInputs,
  rabbitInputs,
  rabbitUsersWithMarker,
} from "./provider-targets";
import { killServer, spawnServer, withDatabase, type ServerProcess, type Storage } from "./server-process";

const scope = { projectSlug: "", environmentSlug: "dev", path: "/" };

const rolesWithMarker = async (marker: string) =>
  (await targetQuery<{ rolname: string }>("select rolname from pg_roles where strpos(rolname, $1) > 0", [marker])).map(
    (r) => r.rolname,
  );

/** One dynamic secret per provider; each lists the credentials carrying its marker on its own server. */
const PROVIDERS = [
  { name: "db", provider: () => ({ type: "sql-database" as const, inputs: sqlInputs() }), list: rolesWithMarker },
  {
    name: "maria",
    provider: () => ({ type: "sql-database" as const, inputs: mysqlInputs() }),
    list: mariadbUsersWithMarker,
  },
  { name: "mq", provider: () => ({ type: "rabbit-mq" as const, inputs: rabbitInputs() }), list: rabbitUsersWithMarker },
  { name: "dir", provider: () => ({ type: "ldap" as const, inputs: ldapInputs() }), list: ldapEntriesWithMarker },
];

const leaseRows = (storage: Storage) =>
  withDatabase(storage, (db) =>
    db.selectFrom("dynamic_secret_leases").select(["id", "state", "external_entity_id"]).execute(),
  );

/** Every credential carrying one of the markers, on every target. */
const credentialsWithMarkers = async (markers: Map<string, string>) => {
  const found: string[] = [];
  for (const { name, list } of PROVIDERS) found.push(...(await list(markers.get(name)!)));
  return found;
};

/** The crash-safety invariant: every credential on every target belongs to a lease row. */
const expectNoLoginWithoutLease = async (storage: Storage, markers: Map<string, string>) => {
  const credentials = await credentialsWithMarkers(markers);
  const rows = await leaseRows(storage);
  for (const credential of credentials) expect(rows.map((r) => r.external_entity_id)).toContain(credential);
  return { credentials, rows };
};

/**
 * Lease requests for every provider at once against a server set to die on the way: whichever
 * reaches the kill point first takes the process down with the others anywhere short of it.
 */
const leaseUntilDeath = async (server: ServerProcess, token: string) => {
  const responses = await Promise.all(
    PROVIDERS.map(({ name }) =>
      server
        .client(token)
        .dynamicSecretLeases.create({ body: { ...scope, dynamicSecretName: name } })
        .catch((error: unknown) => error),
    ),
  );
  await server.exited;
  expect(responses.some((response) => response instanceof Error)).toBe(true);
};

describe("crash safety of leases (the real server, killed and restarted)", () => {
  const cleanup: (() => Promise<void> | void)[] = [];
  afterAll(async () => {
    for (const step of cleanup.reverse()) await step();
  });

  it(
    "leaves no working login without a lease row at any kill point, on every provider, and revokes what expired while down",
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
      const markers = new Map<string, string>();
      const firstLeases: { id: string; username: string; name: string }[] = [];
      for (const { name, provider } of PROVIDERS) {
        expectOk(
          await admin.dynamicSecrets.create({ body: { ...scope, name, provider: provider(), defaultTTL: "1h" } }),
        );
        const { lease } = expectOk(
          await admin.dynamicSecretLeases.create({ body: { ...scope, dynamicSecretName: name } }),
        );
        // Every credential of a secret carries its marker: `kw_<8 characters>_`.
        const marker = `${lease.externalEntityId.split("_").slice(0, 2).join("_")}_`;
        expect(marker).toMatch(/^kw_[a-z0-9]{8}_$/);
        markers.set(name, marker);
        firstLeases.push({ id: lease.id, username: lease.externalEntityId, name });
      }
      await killServer(first);

      // 2. While no server runs, the leases expire (a role would still accept logins until VALID UNTIL,
      //    the other targets have no expiry of their own).
      await withDatabase(storage, (db) =>
        db
          .updateTable("dynamic_secret_leases")
          .set({ expire_at: sql<Date>`now() - interval '5 seconds'` })
          .where(
            "id",
            "in",
            firstLeases.map((l) => l.id),
          )
          .execute(),
      );
      const second = await start("lease-after-intent");
      await waitUntil(
        "the leases that expired while down to be revoked",
        async () => {
          const left = await credentialsWithMarkers(markers);
          return firstLeases.every((l) => !left.includes(l.username));
        },
        30_000,
        250,
      );
      expect(Date.now() - second.startedAt).toBeLessThan(30_000);

      // 3. Killed after committing an intent, before any credential exists.
      await leaseUntilDeath(second, token);
      const afterIntent = await expectNoLoginWithoutLease(storage, markers);
      expect(afterIntent.rows.filter((r) => r.state === "creating").length).toBeGreaterThanOrEqual(1);
      expect(afterIntent.credentials).toHaveLength(0);

      // 4. Killed after a credential was made, before its lease was activated: the rows still account for all.
      const third = await start("lease-after-provider");
      await leaseUntilDeath(third, token);
      const afterProvider = await expectNoLoginWithoutLease(storage, markers);
      expect(afterProvider.credentials.length).toBeGreaterThanOrEqual(1);

      // 5. Killed by the job itself between taking a credential back and deleting its row.
      const fourth = await start("revoke-after-provider");
      await Promise.race([
        fourth.exited,
        new Promise((_resolve, reject) =>
          setTimeout(() => reject(new Error("the job never reached its failpoint")), 60_000),
        ),
      ]);
      await expectNoLoginWithoutLease(storage, markers);

      // 6. A healthy restart reconciles everything within 30 s: no credential and no pending lease remain.
      const fifth = await start();
      await waitUntil(
        "every abandoned lease to be cleaned up",
        async () => {
          if ((await credentialsWithMarkers(markers)).length > 0) return false;
          for (const { name } of PROVIDERS) {
            const listed = await fifth.client(token).dynamicSecrets.listLeases({ params: { name }, query: scope });
            if (listed.status !== 200 || listed.body.leases.length > 0) return false;
          }
          return true;
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
