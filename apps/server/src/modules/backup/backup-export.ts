import { Readable, type Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createDeflateRaw } from "node:zlib";
import type { SecretBox } from "../../crypto/envelope";
import { createSealer } from "../../crypto/sealed-stream";
import type { Database } from "../../db/database";
import {
  closeRowCursor,
  countRows,
  fetchRows,
  lastAppliedMigration,
  listSequences,
  listTables,
  openRowCursor,
  pinTextForms,
  readSequence,
  transactionStatement,
} from "./backup.repository";
import { fileKeyOf, newHeader, preludeOf, type BackupHeader, type BackupManifest } from "./backup-header";
import { BackupRefusal } from "./backup-refusal";
import { backupKeyring } from "./backup-keys";
import { sealedRootOf, type Seals } from "../root-keys/root-key.boot";
import type { CatalogTable } from "./table-order";

/** Rows fetched from a table's cursor at a time: what the export holds in memory is a page and a chunk. */
const PAGE_ROWS = 1_000;

/**
 * Who seals the file: the serving process's keyring, or (a command with a session of its own) the
 * seals the root keys of the snapshot are opened with.
 */
export type ExportSource = { kind: BackupHeader["source"]; keyward: string } & (
  { secretBox: SecretBox } | { seals: Seals }
);

async function* records(db: Database, manifest: BackupManifest, tables: CatalogTable[], total: number) {
  yield Buffer.from(`${JSON.stringify(manifest)}\n`);
  for (const [i, table] of tables.entries()) {
    await openRowCursor(db, table);
    let seen = 0;
    for (;;) {
      const rows = await fetchRows(db, PAGE_ROWS);
      if (rows.length === 0) break;
      seen += rows.length;
      yield Buffer.from(`${rows.map((row) => row.j).join("\n")}\n`);
    }
    await closeRowCursor(db);
    // The count and the rows come from one snapshot: a difference is a bug, never a concurrent write.
    if (seen !== manifest.tables[i]!.rows) throw new Error(`table ${table.name} changed during the backup`);
  }
  yield Buffer.from(`${JSON.stringify({ end: true, rows: total })}\n`);
}

/**
 * Writes a sealed backup of the database to `out` (and ends it). `db` must be inside a transaction
 * that sees one snapshot (repeatable read); every table is read through it, a page at a time.
 */
export const exportSnapshot = async (db: Database, source: ExportSource, out: Writable): Promise<BackupHeader> => {
  await pinTextForms(db);
  const migration = await lastAppliedMigration(db);
  if (!migration) throw new BackupRefusal("backup refused: the database holds no Keyward instance");
  const tables = await listTables(db);
  const manifest: BackupManifest = { tables: [], sequences: [] };
  let total = 0;
  for (const table of tables) {
    const rows = await countRows(db, table.name);
    total += rows;
    manifest.tables.push({ name: table.name, columns: table.columns.map((c) => c.name), rows });
  }
  // Sequences are not transactional: their values now are at least those any row of the snapshot used.
  for (const name of await listSequences(db)) manifest.sequences.push({ name, ...(await readSequence(db, name)) });
  const root = await sealedRootOf(db);
  const secretBox = "secretBox" in source ? source.secretBox : await backupKeyring(root, source.seals);
  const header = newHeader(secretBox, {
    keyward: source.keyward,
    source: source.kind,
    migration,
    tables: tables.length,
    rows: total,
    ...(root ? { root } : {}),
  });
  await pipeline(
    Readable.from(records(db, manifest, tables, total)),
    createDeflateRaw({ level: 6 }),
    createSealer(fileKeyOf(secretBox, header), preludeOf(header)),
    out,
  );
  return header;
};

/** A backup of a serving process's database, from one repeatable-read transaction beside its requests. */
export const exportServing = (db: Database, source: ExportSource, out: Writable) =>
  db
    .transaction()
    .setIsolationLevel("repeatable read")
    .setAccessMode("read only")
    .execute((trx) => exportSnapshot(trx, source, out));

/** A backup through a session of its own (the command's): one read-only repeatable-read transaction. */
export const exportFromSession = async (db: Database, source: ExportSource, out: Writable) => {
  await transactionStatement(db, "snapshot");
  try {
    return await exportSnapshot(db, source, out);
  } finally {
    await transactionStatement(db, "rollback").catch(() => undefined);
  }
};
