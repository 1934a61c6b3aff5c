/**
 * The test files whose outcome can differ between embedded PGlite and a PostgreSQL server, each with
 * the reason. The whole suite runs on PGlite (the README's test command); with
 * KEYWARD_TEST_FILES=engine-dependent (CI's second pass, on PostgreSQL 15) only these run again.
 *
 * What makes a file engine-dependent:
 * - several processes on one database, or the database going away: only a PostgreSQL server can be
 *   shared or cut off, so these files take another path (or skip cases) on PGlite;
 * - transactions at the same time: PGlite has one connection and serves transactions one after another
 *   (src/db/pglite-dialect.ts), so races, row locks, deadlocks and retries only happen on PostgreSQL;
 * - crash safety: what survives a killed process is each engine's own write-ahead log;
 * - the SQL itself: PGlite is a newer major version than the PostgreSQL 15 the docs support, so every
 *   route's statements run once on 15 (the audit coverage suites call every mutating route, the
 *   generated-input fuzzer every endpoint) and so do the migrations and the database layer's tests.
 *
 * Everything else reaches the database through the same Kysely statements on the same engine family and
 * asserts on HTTP answers; the CLI, console and client suites only speak HTTP to a server. Some files set
 * their own database whatever the run's is (OWN_DATABASE), so a second pass would repeat them exactly.
 * `test/architecture/engine-dependent.test.ts` checks that every file naming DATABASE_URL or the
 * onPostgres switch, or using a helper that starts another instance, is listed here or in OWN_DATABASE.
 */
export const ENGINE_DEPENDENT: Readonly<Record<string, string>> = {
  // Several processes on one database, or the database cut off.
  "test/access-approvals/instances.test.ts": "an access grant seen by a second instance",
  "test/access-tokens/token-state.test.ts": "a revocation seen by a second instance",
  "test/audit/stream-restart.test.ts": "audit stream delivery resumed by a restarted process",
  "test/events/instances.test.ts": "the events stream across server processes",
  "test/runtime/cluster.test.ts": "workers of one server sharing the database",
  "test/runtime/port-in-use.test.ts": "start-up order against an unreachable database",
  "test/runtime/shutdown.test.ts": "draining with connections to the database open",
  "test/runtime/rate-limits.test.ts": "limits counted across instances on one database",
  "test/dynamic-secrets/lease-pacing.test.ts": "two instances revoking from one lease table",
  "test/dynamic-secrets/revocation.test.ts": "two revocation runners on one lease table",
  "test/secret-rotations/crash-safety.test.ts": "two instances and rotations cut short by a crash",
  "test/secret-syncs/instances.test.ts": "two sync runners on one database push each change once",
  "test/secret-syncs/secret-syncs.test.ts": "sync claims, cursors and ownership records in SQL on PostgreSQL 15",
  "test/secret-syncs/access.test.ts": "two runs of one sync racing for its claim",
  "test/root-keys/rotation.test.ts":
    "a root-key rotation heard by a second instance, its batches racing readers and writers",
  "test/hsm/hsm-root.test.ts": "root keys of one database unsealed by each restart, on either engine",
  // Crash safety: what a killed process leaves behind.
  "test/dynamic-secrets/crash.test.ts": "leases written before a kill and found after a restart",
  // Transactions at the same time.
  "test/db/races.test.ts": "unique and foreign-key races reported as 4xx",
  "test/db/transaction.test.ts": "deadlock and serialization-failure retries",
  "test/runtime/concurrent-privileges.test.ts": "privilege creates racing in one project",
  "test/runtime/concurrent-permission-writes.test.ts": "permission-version bumps racing inserts",
  "test/runtime/deep-paths.test.ts": "folder writes under concurrent readers",
  "test/users/membership-guards.test.ts": "two admins deactivating each other at once",
  "test/access-approvals/requests.test.ts": "two approvers granting at once",
  "test/secret-approvals/change-requests.test.ts": "two approvers merging at once",
  "test/audit/chain.test.ts": "the audit hash chain under concurrent writers",
  "test/kms/concurrent.test.ts": "key operations racing",
  "test/secret-imports/secret-imports.positions.test.ts": "import positions under parallel moves",
  "test/secrets/concurrent-reads.test.ts": "secret reads beside writes",
  "test/gateways/enrollment.test.ts": "one enrollment token spent by many logins at once",
  "test/dynamic-secrets/unstorable-input-and-races.test.ts": "lease limits under parallel creations",
  // The SQL on PostgreSQL 15: every route, the migrations and the database layer.
  "test/audit/coverage.*.test.ts": "every mutating route's statements",
  "test/audit/coverage.test.ts": "every mutating route's statements",
  "test/fuzz/generated-inputs.test.ts": "every endpoint's statements with generated inputs",
  "test/db/*.test.ts": "the database layer: batching, compiled statements, rejected input",
  "test/approvals/principals-migration.test.ts": "the approvers' table moved by a migration on an upgraded database",
  "test/secrets/search.test.ts": "pattern search compiled to SQL",
  "test/secrets/commits.test.ts": "folder commits assigned by a trigger and folder states rebuilt in SQL",
  "test/secrets/folder-versions-migration.test.ts":
    "folder versions backfilled and constraints dropped on an upgraded database",
  "test/secrets/commit-folders.test.ts":
    "folder versions recorded by triggers through cascades and an environment's deletion, in SQL",
  "test/audit/paging.test.ts": "keyset paging over timestamps",
  "test/secrets/paging.test.ts": "keyset paging over names",
};

/**
 * Files that choose their database whatever the run's is: the README's quick start and the start command
 * run the server on PGlite as a newcomer does; the outage files stop, freeze and cut a PostgreSQL 15 of
 * their own (a frozen and a vanished database; an outage under a cluster at load); the backup's move from
 * PGlite to PostgreSQL restores into a fresh database of the run's PostgreSQL 15 target server and back.
 */
export const OWN_DATABASE: readonly string[] = [
  "test/app/readme-quickstart.test.ts",
  "test/runtime/start-command.test.ts",
  "test/runtime/database-outage.test.ts",
  "test/runtime/database-outage-cluster.test.ts",
  "test/backup/postgres.test.ts",
];
