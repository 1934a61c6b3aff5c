import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { pipeline } from "node:stream/promises";
import { createVerifyingTap } from "../crypto/sealed-stream";
import { openDatabase } from "../db/database";
import { openPostgresSession } from "../db/session";
import type { Env } from "../env";
import { FileExistsError, writeFileAtomically } from "../lib/atomic-file";
import { exportFromSession } from "../modules/backup/backup-export";
import { fileKeyOf, HeaderSchema, keyCheckMatches, type BackupHeader } from "../modules/backup/backup-header";
import { BackupRefusal } from "../modules/backup/backup-refusal";
import { backupKeyring } from "../modules/backup/backup-keys";
import type { Seals } from "../modules/root-keys/root-key.boot";
import { closeSeals, commandSeals } from "../modules/root-keys/seals";
import { failureLine } from "./command-line";
import { CONTROL_SOCKET, requestBackup } from "./control-socket";
import { keywardVersion } from "./version";

type Written = { result: BackupHeader; bytes: number };

const fromPostgres = async (databaseUrl: string, seals: Seals, out: string): Promise<Written> => {
  const session = await openPostgresSession(databaseUrl);
  try {
    return await writeFileAtomically(out, (dest) =>
      exportFromSession(session.db, { kind: "postgres", keyward: keywardVersion(), seals }, dest),
    );
  } finally {
    await session.close();
  }
};

/**
 * Through the serving process's control socket: the file is checked as it arrives (every chunk must
 * open under this command's key, and the last one must come), and kept only then.
 */
const fromServingProcess = async (
  served: NonNullable<Awaited<ReturnType<typeof requestBackup>>>,
  seals: Seals,
  out: string,
): Promise<Written> => {
  let header: BackupHeader | undefined;
  const tap = createVerifyingTap(async (raw) => {
    const parsed = HeaderSchema.safeParse(raw);
    if (!parsed.success) throw new BackupRefusal("backup failed: the serving process sent no Keyward backup");
    const secretBox = await backupKeyring(parsed.data.root, seals);
    if (!keyCheckMatches(secretBox, parsed.data))
      throw new BackupRefusal(
        "backup refused: the serving process seals under another key than this command's ENCRYPTION_KEY (key check does not match); run it with the instance's configuration",
      );
    header = parsed.data;
    return fileKeyOf(secretBox, parsed.data);
  });
  const written = await writeFileAtomically(out, (dest) => pipeline(served.socket, tap, dest));
  if (!header || written.bytes !== served.bytes)
    throw new Error(`the serving process announced ${served.bytes} bytes and sent ${written.bytes}`);
  return { result: header, bytes: written.bytes };
};

const fromPglite = async (env: Env, seals: Seals, out: string): Promise<Written> => {
  const served = await requestBackup(env.DATA_DIR);
  if (served) return fromServingProcess(served, seals, out);
  if (!existsSync(join(env.DATA_DIR, "pgdata", "PG_VERSION")))
    throw new BackupRefusal(`backup refused: DATA_DIR ${env.DATA_DIR} holds no Keyward database`);
  // No process serves it: opened here, under the data directory's lock (refused while another holds it).
  const handle = await openDatabase({ dataDir: env.DATA_DIR, sharedBuffers: env.PGLITE_SHARED_BUFFERS }).catch(
    (error: Error) => {
      if (!/in use by process/.test(error.message)) throw error;
      throw new BackupRefusal(
        `backup refused: ${error.message}, which answers no backup on ${join(env.DATA_DIR, CONTROL_SOCKET)} (see its log)`,
      );
    },
  );
  try {
    return await writeFileAtomically(out, (dest) =>
      exportFromSession(handle.db, { kind: "pglite", keyward: keywardVersion(), seals }, dest),
    );
  } finally {
    await handle.close();
  }
};

/**
 * `backup --out FILE`: a sealed backup of the configured instance (DATABASE_URL, else DATA_DIR), with
 * its key (ENCRYPTION_KEY, else DATA_DIR/root.key; none is ever generated here). One line on stdout
 * and exit 0, or one line on stderr and exit 1.
 */
export const runBackupCommand = async (env: Env, file: string) => {
  const started = performance.now();
  try {
    const out = resolve(file);
    if (existsSync(out)) throw new FileExistsError(`${out} exists`);
    const seals = await commandSeals(env);
    if (!seals.software && !seals.hsm)
      throw new BackupRefusal(
        "backup refused: no key; set ENCRYPTION_KEY (or keep DATA_DIR/root.key) as the instance has it, or the HSM_* variables",
      );
    const { result: header, bytes } = await (
      env.DATABASE_URL ? fromPostgres(env.DATABASE_URL, seals, out) : fromPglite(env, seals, out)
    ).finally(() => closeSeals(seals));
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    process.stdout.write(
      `backup written to ${file}: ${header.rows} rows in ${header.tables} tables (${header.source}, migration ${header.migration}), ${bytes} bytes in ${seconds} s\n`,
    );
    process.exit(0);
  } catch (error) {
    const line =
      error instanceof FileExistsError
        ? `backup refused: ${file} exists; a backup never replaces a file`
        : failureLine("backup", error, (e) => e instanceof BackupRefusal);
    process.stderr.write(`${line}\n`);
    process.exit(1);
  }
};
