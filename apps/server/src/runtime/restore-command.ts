import { existsSync, readdirSync, renameSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import type { SecretBox } from "../crypto/envelope";
import { backupKeyring } from "../modules/backup/backup-keys";
import { closeSeals, commandSeals } from "../modules/root-keys/seals";
import { lockDataDir, openDatabase } from "../db/database";
import { PGLITE_TEMPLATE } from "../db/pglite-template";
import { knownMigrations, openPostgresSession } from "../db/session";
import type { Env } from "../env";
import { keyCheckMatches } from "../modules/backup/backup-header";
import { BackupRefusal } from "../modules/backup/backup-refusal";
import {
  assertKnownMigration,
  authenticateBackup,
  readBackupHeader,
  restoreBackup,
  type OpenedBackup,
  type RestoreSummary,
} from "../modules/backup/backup-restore";
import { failureLine } from "./command-line";

/** Where an embedded restore builds its database before it is put in place as DATA_DIR/pgdata. */
const STAGING = ".restore-staging";
/** What an empty DATA_DIR may hold: the key it is restored with, this command's lock, a staging folder left by a crash. */
const ALLOWED_IN_EMPTY = new Set(["root.key", "keyward.lock", STAGING]);

const intoPostgres = async (databaseUrl: string, backup: OpenedBackup, secretBox: SecretBox) => {
  const session = await openPostgresSession(databaseUrl);
  try {
    return await restoreBackup(session.db, backup, secretBox, {
      emptySchema: true,
      target: "the database at DATABASE_URL",
    });
  } finally {
    await session.close();
  }
};

/**
 * Into DATA_DIR, which must be absent or hold nothing but `root.key`: the database is built in a
 * staging folder inside it and moved to DATA_DIR/pgdata only once restored and verified. On failure
 * DATA_DIR is left as it was (removed again if this command created it).
 */
const intoPglite = async (env: Env, backup: OpenedBackup, secretBox: SecretBox) => {
  const dataDir = resolve(env.DATA_DIR);
  const existed = existsSync(dataDir);
  const unlock = lockDataDir(dataDir);
  const staging = join(dataDir, STAGING);
  let restored = false;
  try {
    const entries = readdirSync(dataDir).sort();
    const held = entries.includes("pgdata") ? "pgdata" : entries.find((name) => !ALLOWED_IN_EMPTY.has(name));
    if (held)
      throw new BackupRefusal(
        `restore refused: DATA_DIR ${env.DATA_DIR} is not empty (it holds ${held}); restore into a new DATA_DIR`,
      );
    rmSync(staging, { recursive: true, force: true });
    await assertKnownMigration(backup);
    await authenticateBackup(backup, secretBox);
    // The built template is the current schema: a start from it when the backup is at that schema too.
    const current = (await knownMigrations()).at(-1) === backup.header.migration;
    const handle = await openDatabase({
      dataDir: staging,
      template: current ? PGLITE_TEMPLATE : undefined,
      sharedBuffers: env.PGLITE_SHARED_BUFFERS,
    });
    let summary: RestoreSummary;
    try {
      summary = await restoreBackup(handle.db, backup, secretBox, { emptySchema: false, target: "DATA_DIR" });
    } finally {
      await handle.close();
    }
    renameSync(join(staging, "pgdata"), join(dataDir, "pgdata"));
    restored = true;
    return summary;
  } finally {
    rmSync(staging, { recursive: true, force: true });
    unlock();
    if (!restored && !existed) rmSync(dataDir, { recursive: true, force: true });
  }
};

/**
 * `restore --in FILE` into the configured target (DATABASE_URL, else DATA_DIR), in this order of
 * refusals: a file that is no backup, no key, another key, a target that is not empty, a backup of a
 * newer Keyward, a damaged file or one that does not verify. One line on stdout and exit 0, or one
 * line on stderr and exit 1 with the target as it was.
 */
export const runRestoreCommand = async (env: Env, file: string) => {
  const started = performance.now();
  try {
    const backup = await readBackupHeader(file);
    const seals = await commandSeals(env);
    const wrongKey = () =>
      new BackupRefusal(
        `restore refused: ${file} was sealed under a different ENCRYPTION_KEY (key check does not match); set ENCRYPTION_KEY to the source instance's key`,
      );
    const secretBox = await (async () => {
      if (!seals.software && !seals.hsm)
        throw new BackupRefusal("restore refused: no key; set ENCRYPTION_KEY to the source instance's key");
      return backupKeyring(backup.header.root, seals, "restore", wrongKey);
    })().finally(() => closeSeals(seals));
    if (!keyCheckMatches(secretBox, backup.header)) throw wrongKey();
    const summary = env.DATABASE_URL
      ? await intoPostgres(env.DATABASE_URL, backup, secretBox)
      : await intoPglite(env, backup, secretBox);
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    process.stdout.write(
      `restored ${file} into ${env.DATABASE_URL ? "PostgreSQL" : `DATA_DIR ${env.DATA_DIR}`}: ${summary.rows} rows in ${summary.tables} tables; ` +
        `${summary.dataKeys} data keys, ${summary.sealedValues} sealed secret values and ${summary.rootSealedValues} other sealed values opened; ` +
        `${summary.auditEvents} audit events in ${summary.auditChains} chains verified; ${seconds} s\n`,
    );
    process.exit(0);
  } catch (error) {
    process.stderr.write(`${failureLine("restore", error, (e) => e instanceof BackupRefusal)}\n`);
    process.exit(1);
  }
};
