import { readFileSync } from "node:fs";
import { rootCertificates } from "node:tls";
import type { AppDeps, AuthenticatedToken } from "./context";
import { createSecretBox, loadRootKey } from "./crypto/envelope";
import { migrateToLatest, openDatabase, type DatabaseHandle } from "./db/database";
import type { Env } from "./env";
import { createLogger } from "./lib/logger";
import { createTokenCache } from "./modules/access-tokens/token-cache";
import { allJobs } from "./jobs";
import { resolveTemplate } from "./modules/project-templates/project-template.apply";
import { createLru } from "./lib/lru";
import type { TargetPool } from "./modules/dynamic-secrets/providers/types";
import { createAbilityCache, createProjectIdCache } from "./modules/authz/ability-cache";
import { createDataKeyCache } from "./modules/project-keys/data-key-cache";
import { createKmsMaterialCache } from "./modules/kms/kms-material-cache";
import { createAuditBuffer } from "./modules/audit/audit-buffer";

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
  const clock = { now: () => Date.now() };
  const deps: AppDeps = {
    clock,
    db: handle.db,
    dbKind: handle.kind,
    env,
    logger,
    secretBox: createSecretBox(loadRootKey(env.ENCRYPTION_KEY, env.DATA_DIR)),
    ping: handle.ping,
    tokenCache: createTokenCache<AuthenticatedToken>(clock.now),
    abilityCache: createAbilityCache(),
    projectIdCache: createProjectIdCache(),
    tokenUseWrites: createLru<number>(50_000),
    targetPools: createLru<TargetPool>(100, (pool) => void pool.end().catch(() => undefined)),
    hooks: { resolveProjectTemplate: resolveTemplate },
    dataKeys: createDataKeyCache(),
    kmsMaterial: createKmsMaterialCache(),
    auditBuffer: createAuditBuffer(),
    keySets: createLru<{ document: unknown; fetchedAt: number; refetchedAt?: number }>(1_000),
    outboundCa: env.OUTBOUND_EXTRA_CA_FILE
      ? [...rootCertificates, readFileSync(env.OUTBOUND_EXTRA_CA_FILE, "utf8")].join("\n")
      : undefined,
    jobs: allJobs(),
  };
  return { deps, handle };
};
