import type { AppDeps, AuthenticatedToken } from "./context";
import { createSecretBox, loadRootKey } from "./crypto/envelope";
import { migrateToLatest, openDatabase, type DatabaseHandle } from "./db/database";
import type { Env } from "./env";
import { createLogger } from "./http/logger";
import { createTokenCache } from "./http/token-cache";
import { allJobs } from "./jobs";
import { createDataKeyCache } from "./modules/project-keys/data-key-cache";

/** Open the database, apply migrations and assemble what createApp needs. */
export const buildDeps = async (
  env: Env,
  options: { dataDir?: string } = {},
): Promise<{ deps: AppDeps; handle: DatabaseHandle }> => {
  const logger = createLogger(env.LOG_LEVEL);
  const handle = await openDatabase({ databaseUrl: env.DATABASE_URL, dataDir: options.dataDir ?? env.DATA_DIR });
  try {
    await migrateToLatest(handle.db);
  } catch (error) {
    await handle.close();
    throw error;
  }
  const deps: AppDeps = {
    db: handle.db,
    dbKind: handle.kind,
    env,
    logger,
    secretBox: createSecretBox(loadRootKey(env.ENCRYPTION_KEY, env.DATA_DIR)),
    ping: handle.ping,
    tokenCache: createTokenCache<AuthenticatedToken>(),
    dataKeys: createDataKeyCache(),
    jobs: allJobs(),
  };
  return { deps, handle };
};
