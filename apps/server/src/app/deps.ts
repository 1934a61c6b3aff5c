import { readFileSync } from "node:fs";
import { rootCertificates } from "node:tls";
import type { AppDeps, AuthenticatedToken } from "../context";
import { createSecretBox, loadRootKey } from "../crypto/envelope";
import { migrateToLatest, openDatabase, type DatabaseHandle } from "../db/database";
import type { Env } from "../env";
import { createLogger } from "../lib/logger";
import { createLifecycle } from "../lib/lifecycle";
import { createMetrics } from "../lib/metrics";
import { createTokenCache } from "../modules/access-tokens/token-cache";
import { allJobs } from "./jobs";
import { resolveTemplate } from "../modules/project-templates/project-template.apply";
import { createLru } from "../lib/lru";
import type { TargetPool } from "../modules/dynamic-secrets/providers/types";
import { createAbilityCache, createProjectIdCache } from "../modules/authz/ability-cache";
import { createDataKeyCache } from "../modules/project-keys/data-key-cache";
import { createKmsMaterialCache } from "../modules/kms/kms-material-cache";
import { createAuditBuffer } from "../modules/audit/audit-buffer";

/** Open the database, apply migrations and assemble what createApp needs. */
export const buildDeps = async (
  env: Env,
  options: { dataDir?: string } = {},
): Promise<{ deps: AppDeps; handle: DatabaseHandle }> => {
  const logger = createLogger(env.LOG_LEVEL);
  const dataDir = options.dataDir ?? env.DATA_DIR;
  const handle = await openDatabase({
    databaseUrl: env.DATABASE_URL,
    dataDir,
    poolSize: env.DB_POOL_SIZE,
    connectTimeoutMs: env.DB_CONNECT_TIMEOUT_MS,
    statementTimeoutMs: env.DB_STATEMENT_TIMEOUT_MS,
    logger,
  });
  try {
    if (env.DATABASE_URL) {
      // Migrations on a large database may run longer than the statement bound requests get.
      const migrating = await openDatabase({ databaseUrl: env.DATABASE_URL, poolSize: 1, statementTimeoutMs: 0 });
      await migrateToLatest(migrating.db).finally(() => migrating.close());
    } else {
      await migrateToLatest(handle.db);
    }
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
    dbHealth: handle.health,
    lifecycle: createLifecycle(),
    metrics: createMetrics(handle.poolStats),
    tokenCache: createTokenCache<AuthenticatedToken>(clock.now),
    abilityCache: createAbilityCache(),
    projectIdCache: createProjectIdCache(),
    tokenUseWrites: createLru<number>(50_000),
    targetPools: createLru<TargetPool>(100, (pool) => void pool.end().catch(() => undefined)),
    hooks: { resolveProjectTemplate: resolveTemplate },
    dataKeys: createDataKeyCache(),
    kmsMaterial: createKmsMaterialCache(),
    auditBuffer: createAuditBuffer(),
    auditActors: new WeakMap(),
    keySets: createLru<{ document: unknown; fetchedAt: number; refetchedAt?: number }>(1_000),
    outboundCa: env.OUTBOUND_EXTRA_CA_FILE
      ? [...rootCertificates, readFileSync(env.OUTBOUND_EXTRA_CA_FILE, "utf8")].join("\n")
      : undefined,
    jobs: allJobs(),
  };
  return { deps, handle };
};
