import { createMailer } from "../lib/mail";
import { createSessionsState } from "../modules/sessions/sessions.state";
import { createEventsState } from "../modules/events/events.state";
import { createSecretSyncsState } from "../modules/secret-syncs/secret-syncs.state";
import { createSecretWriteGate } from "../modules/approvals/secret-changes/change-request.service";
import { createUsersState } from "../modules/users/users.state";
import { createSecretListsState } from "../modules/secrets/secrets.state";
import { readFileSync } from "node:fs";
import { rootCertificates } from "node:tls";
import type { AppDeps } from "../context";
import { migrateToLatest, openDatabase, type DatabaseHandle } from "../db/database";
import { PGLITE_TEMPLATE } from "../db/pglite-template";
import type { Env } from "../env";
import { createLogger } from "../lib/logger";
import { createLifecycle } from "../lib/lifecycle";
import { createMetrics } from "../lib/metrics";
import { allJobs } from "./jobs";
import { resolveTemplate } from "../modules/project-templates/project-template.apply";
import { createAccessTokensState } from "../modules/access-tokens/access-tokens.state";
import { createAuditState } from "../modules/audit/audit.state";
import { createPkiState } from "../modules/pki/pki.state";
import { createConnectorsState } from "../modules/connectors/connectors.state";
import { createAuthzState } from "../modules/authz/authz.state";
import { createDynamicSecretsState } from "../modules/dynamic-secrets/dynamic-secrets.state";
import { createKmsState } from "../modules/kms/kms.state";
import { createProjectKeysState } from "../modules/project-keys/project-keys.state";
import { createRootKeysState } from "../modules/root-keys/root-keys.state";
import { closeSeals, openRootKeys } from "../modules/root-keys/seals";
import { randomUUID } from "node:crypto";
import type { KeyringSnapshot } from "../crypto/root-keyring";

/**
 * Open the database, apply migrations (unless `migrate` is false: a cluster worker, whose primary
 * migrated, or a caller that did) and assemble what createApp needs. A new PGlite database starts from
 * the migrated template (`pgliteTemplate`, by default the one the build wrote beside the bundle).
 */
export const buildDeps = async (
  env: Env,
  options: {
    dataDir?: string;
    migrate?: boolean;
    pgliteTemplate?: string;
    /** The root keys as the cluster primary opened them (a worker needs no database to start). */
    keyring?: KeyringSnapshot;
  } = {},
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
    template: options.pgliteTemplate ?? PGLITE_TEMPLATE,
    sharedBuffers: env.PGLITE_SHARED_BUFFERS,
  });
  try {
    if (options.migrate === false) {
      // The schema is current: nothing here needs the database before the first request.
    } else if (env.DATABASE_URL) {
      // Migrations on a large database may run longer than the statement bound requests get.
      const migrating = await openDatabase({ databaseUrl: env.DATABASE_URL, poolSize: 1, statementTimeoutMs: 0 });
      await migrateToLatest(migrating.db, logger).finally(() => migrating.close());
    } else {
      await migrateToLatest(handle.db, logger);
    }
  } catch (error) {
    await handle.close();
    throw error;
  }
  const clock = { now: () => Date.now() };
  const { seals, keyring: secretBox } = await openRootKeys(env, handle.db, logger, options.keyring).catch(
    async (error: unknown) => {
      await handle.close();
      throw error;
    },
  );
  const deps: AppDeps = {
    clock,
    db: handle.db,
    dbKind: handle.kind,
    env,
    logger,
    secretBox,
    mailer: createMailer(env.SMTP_URL, env.SMTP_FROM),
    ping: handle.ping,
    dbHealth: handle.health,
    listen: handle.listen,
    lifecycle: createLifecycle(),
    metrics: createMetrics(handle.poolStats),
    ...createRootKeysState(handle.db, secretBox, seals, randomUUID()),
    ...createAccessTokensState(clock, env.TOKEN_CACHE_MAX_ENTRIES),
    ...createAuthzState(env.ABILITY_CACHE_MAX_ENTRIES, env.PROJECT_ACCESS_CACHE_MAX_ENTRIES),
    ...createConnectorsState(),
    ...createDynamicSecretsState(),
    ...createProjectKeysState(clock),
    ...createKmsState(clock),
    ...createPkiState(clock),
    ...createAuditState(secretBox),
    ...createSessionsState(secretBox),
    ...createEventsState(),
    ...createSecretSyncsState(),
    ...createSecretWriteGate(),
    ...createUsersState(),
    ...createSecretListsState({
      largeRows: env.SECRET_LIST_LARGE_ROWS,
      slots: env.SECRET_LIST_SLOTS,
      queueTimeoutMs: env.SECRET_LIST_QUEUE_TIMEOUT_MS,
    }),
    hooks: { resolveProjectTemplate: resolveTemplate },
    outboundCa: env.OUTBOUND_EXTRA_CA_FILE
      ? [...rootCertificates, readFileSync(env.OUTBOUND_EXTRA_CA_FILE, "utf8")].join("\n")
      : undefined,
    jobs: allJobs(),
  };
  watchCacheSizes(deps);
  // The HSM session ends with the database: whoever closes the handle (shutdown, a test) closes both.
  const closeDatabase = handle.close;
  return { deps, handle: { ...handle, close: () => closeSeals(seals).then(closeDatabase) } };
};

/** The per-request caches' sizes as the `keyward_cache_entries` gauge, so their bounds can be watched. */
const watchCacheSizes = (deps: AppDeps) => {
  deps.metrics.watchCacheSize("access_tokens", () => deps.tokenCache.size());
  deps.metrics.watchCacheSize("token_use_writes", () => deps.tokenUseWrites.size());
  deps.metrics.watchCacheSize("abilities", () => deps.abilityCache.abilities());
  deps.metrics.watchCacheSize("project_access", () => deps.abilityCache.size());
  deps.metrics.watchCacheSize("project_ids", () => deps.projectIdCache.size());
  deps.metrics.watchCacheSize("ocsp_answers", () => deps.ocspAnswers.size());
};
