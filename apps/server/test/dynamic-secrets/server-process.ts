import { openDatabase, type Database } from "../../src/db/database";
import { spawnKeyward, stopKeyward, type Spawned } from "../runtime/spawn";

/** Where a spawned server keeps its data: a PostgreSQL database, or an embedded PGlite directory. */
export type Storage = { databaseUrl?: string; dataDir: string; encryptionKey: string };

export type ServerProcess = Spawned;

/**
 * The real server over `storage`, not bootstrapped, with the revocation job every 500 ms. One process
 * (WORKERS=1), so SIGKILL (or a failpoint) takes the whole server down at once.
 */
export const spawnServer = (storage: Storage, extraEnv: Record<string, string> = {}): Promise<ServerProcess> =>
  spawnKeyward(
    {
      DATA_DIR: storage.dataDir,
      ENCRYPTION_KEY: storage.encryptionKey,
      // Warnings too: a start-up that waits (on the database, on its port) says so in the log a timeout shows.
      LOG_LEVEL: "warn",
      ALLOW_PRIVATE_OUTBOUND: "loopback",
      LEASE_REVOCATION_INTERVAL_MS: "500",
      // Claims and the creating grace (twice this) lapse in 6 s instead of 20: the crash test waits them out.
      CONNECTOR_DEADLINE_MS: "3000",
      WORKERS: "1",
      ...(storage.databaseUrl ? { DATABASE_URL: storage.databaseUrl } : {}),
      ...extraEnv,
    },
    { bootstrap: false },
  );

export const killServer = stopKeyward;

/** Open the server's database from the test while no server runs (PGlite allows one process at a time). */
export const withDatabase = async <T>(storage: Storage, work: (db: Database) => Promise<T>) => {
  const handle = await openDatabase({ databaseUrl: storage.databaseUrl, dataDir: storage.dataDir });
  try {
    return await work(handle.db);
  } finally {
    await handle.close();
  }
};
