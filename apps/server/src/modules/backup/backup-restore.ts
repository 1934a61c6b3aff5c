import { createReadStream } from "node:fs";
import { open } from "node:fs/promises";
import { Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createInflateRaw } from "node:zlib";
import type { SecretBox } from "../../crypto/envelope";
import { createOpener, decodePrelude, SealedStreamError } from "../../crypto/sealed-stream";
import type { Database } from "../../db/database";
import { knownMigrations, migrateInSession } from "../../db/session";
import {
  countSchemaRelations,
  holdMigrationLock,
  pinTextForms,
  setReplicationRole,
  setSequence,
  transactionStatement,
} from "./backup.repository";
import { BACKUP_FORMAT, fileKeyOf, HeaderSchema, type BackupHeader } from "./backup-header";
import { loadRecords } from "./backup-load";
import { BackupRefusal } from "./backup-refusal";
import { verifyRestored, type Verified } from "./restore-verify";

export type OpenedBackup = { file: string; header: BackupHeader; prelude: Buffer };
export type RestoreSummary = Verified & { tables: number; rows: number };

const PRELUDE_READ_BYTES = 1024 * 1024 + 64;

/** The file's clear header; refuses a file that is not a backup, or one of a format this Keyward does not read. */
export const readBackupHeader = async (file: string): Promise<OpenedBackup> => {
  let bytes: Buffer;
  try {
    const handle = await open(file, "r");
    try {
      const buffer = Buffer.alloc(PRELUDE_READ_BYTES);
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
      bytes = buffer.subarray(0, bytesRead);
    } finally {
      await handle.close();
    }
  } catch (error) {
    throw new BackupRefusal(
      `restore refused: ${file} cannot be read (${(error as NodeJS.ErrnoException).code ?? "error"})`,
    );
  }
  const notBackup = new BackupRefusal(`restore refused: ${file} is not a Keyward backup (unreadable header)`);
  let decoded;
  try {
    decoded = decodePrelude(bytes);
  } catch {
    throw notBackup;
  }
  if (!decoded) throw notBackup;
  const parsed = HeaderSchema.safeParse(decoded.header);
  if (!parsed.success) {
    const format = (decoded.header as { format?: unknown } | null)?.format;
    if (typeof format === "number" && format !== BACKUP_FORMAT)
      throw new BackupRefusal(
        `restore refused: ${file} has backup format ${format}, unknown to this Keyward; upgrade first`,
      );
    throw notBackup;
  }
  return { file, header: parsed.data, prelude: Buffer.from(decoded.prelude) };
};

/** Refuses a backup whose schema is past this Keyward's last migration. */
export const assertKnownMigration = async ({ file, header }: OpenedBackup) => {
  if (!(await knownMigrations()).includes(header.migration))
    throw new BackupRefusal(
      `restore refused: ${file} was written by a newer Keyward (its schema is at migration ${header.migration}); upgrade first`,
    );
};

/** Failures of the file itself, as one line; anything else is the caller's to report. */
const asFileRefusal = (file: string, error: unknown) => {
  if (error instanceof BackupRefusal) return error;
  if (error instanceof SealedStreamError)
    return new BackupRefusal(
      error.kind === "truncated"
        ? `restore refused: ${file} is truncated (${error.message}); nothing was restored`
        : `restore refused: ${file} is damaged (${error.message}); nothing was restored`,
    );
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string" && code.startsWith("Z_"))
    return new BackupRefusal(
      `restore refused: ${file} is damaged (its content does not decompress); nothing was restored`,
    );
  return error;
};

/**
 * Reads the whole file once and opens every chunk (nothing is decompressed or loaded): a truncated or
 * altered file is refused before a target is touched.
 */
export const authenticateBackup = async (backup: OpenedBackup, secretBox: SecretBox) => {
  await pipeline(
    createReadStream(backup.file, { start: backup.prelude.length }),
    createOpener(fileKeyOf(secretBox, backup.header), backup.prelude),
    new Writable({ write: (_chunk, _encoding, callback) => callback() }),
  ).catch((error: unknown) => {
    throw asFileRefusal(backup.file, error);
  });
};

/**
 * Restores a backup into `db`, one session, in one transaction: migrations up to the backup's, its rows
 * with triggers off (`session_replication_role = replica`, foreign-key checks included), its sequences,
 * the later migrations, then `verifyRestored`; committed only when all of it passed. With
 * `emptySchema` (a PostgreSQL target), the database must hold no relation in schema `public` (checked
 * under the migration lock, so a server starting on it waits and then finds the restored schema), and
 * the file is authenticated whole before anything is written; an embedded target's caller checks both
 * before it builds the staging database.
 */
export const restoreBackup = async (
  db: Database,
  backup: OpenedBackup,
  secretBox: SecretBox,
  { emptySchema, target }: { emptySchema: boolean; target: string },
): Promise<RestoreSummary> => {
  await transactionStatement(db, "begin");
  try {
    if (emptySchema) {
      await holdMigrationLock(db);
      const relations = await countSchemaRelations(db);
      if (relations > 0)
        throw new BackupRefusal(
          `restore refused: ${target} is not empty (${relations} tables, views or sequences in schema public); restore into an empty database`,
        );
      await assertKnownMigration(backup);
      await authenticateBackup(backup, secretBox);
    }
    try {
      await setReplicationRole(db, "replica");
    } catch (error) {
      if ((error as { code?: unknown }).code !== "42501") throw error;
      throw new BackupRefusal(
        "restore refused: the database user may not set session_replication_role; restore as a superuser or GRANT SET ON PARAMETER session_replication_role to it",
      );
    }
    await setReplicationRole(db, "origin");
    await migrateInSession(db, backup.header.migration);
    await pinTextForms(db);
    const loaded = await pipeline(
      createReadStream(backup.file, { start: backup.prelude.length }),
      createOpener(fileKeyOf(secretBox, backup.header), backup.prelude),
      createInflateRaw(),
      (plain: AsyncIterable<Buffer>) => loadRecords(db, backup, plain),
    ).catch((error: unknown) => {
      throw asFileRefusal(backup.file, error);
    });
    for (const sequence of loaded.sequences) await setSequence(db, sequence.name, sequence.value, sequence.called);
    await setReplicationRole(db, "origin");
    await migrateInSession(db);
    const verified = await verifyRestored(db, secretBox);
    await transactionStatement(db, "commit");
    return { ...verified, tables: loaded.tables, rows: loaded.rows };
  } catch (error) {
    await transactionStatement(db, "rollback").catch(() => undefined);
    throw error;
  }
};
