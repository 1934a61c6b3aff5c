import { SealedStreamError } from "../../crypto/sealed-stream";
import type { Database } from "../../db/database";
import { emptyTable, insertRows, listTables, setReplicationRole } from "./backup.repository";
import { EndSchema, ManifestSchema, type BackupManifest } from "./backup-header";
import { BackupRefusal } from "./backup-refusal";
import type { CatalogTable } from "./table-order";

/** Rows per insert, and the bytes of JSON one insert carries at most (a row larger than that goes alone). */
const BATCH_ROWS = 1_000;
const BATCH_BYTES = 1024 * 1024;
const NEWLINE = 0x0a;

/** The lines of a byte stream, each decoded once whole (a character split across chunks stays intact). */
async function* linesOf(source: AsyncIterable<Buffer>) {
  let rest: Buffer = Buffer.alloc(0);
  for await (const chunk of source) {
    let bytes = rest.length > 0 ? Buffer.concat([rest, chunk]) : chunk;
    for (let at = bytes.indexOf(NEWLINE); at >= 0; at = bytes.indexOf(NEWLINE)) {
      yield bytes.toString("utf8", 0, at);
      bytes = bytes.subarray(at + 1);
    }
    rest = Buffer.from(bytes);
  }
  if (rest.length > 0) yield rest.toString("utf8");
}

const parseJson = (line: string, what: string) => {
  try {
    return JSON.parse(line) as unknown;
  } catch {
    throw new Error(`its ${what} is not JSON`);
  }
};

/**
 * Each table of the manifest as this database has it, with the backup's columns in the backup's order
 * and this database's types: a table or column this schema lacks refuses the file.
 */
const targetsOf = async (db: Database, file: string, manifest: BackupManifest): Promise<CatalogTable[]> => {
  const here = new Map((await listTables(db)).map((table) => [table.name, table]));
  return manifest.tables.map((table) => {
    const target = here.get(table.name);
    const types = new Map(target?.columns.map((c) => [c.name, c.type]));
    const missing = target ? table.columns.filter((c) => !types.has(c)) : [];
    if (!target || missing.length > 0)
      throw new BackupRefusal(
        `restore refused: ${file} does not match this Keyward's schema at its migration (${table.name}${missing.length ? `.${missing[0]}` : ""})`,
      );
    return { name: table.name, columns: table.columns.map((name) => ({ name, type: types.get(name)! })) };
  });
};

type Loaded = { tables: number; rows: number; sequences: BackupManifest["sequences"] };

/**
 * Loads the decompressed records of a backup into `db` (inside the restore's transaction): the
 * manifest, then each table's rows in batches, then the end line. Triggers are off while rows go in,
 * and each table is emptied first, so rows a migration may have written never clash with the backup's.
 */
export const loadRecords = async (
  db: Database,
  backup: { file: string },
  plain: AsyncIterable<Buffer>,
): Promise<Loaded> => {
  let manifest: BackupManifest | undefined;
  let targets: CatalogTable[] = [];
  let table = 0;
  let inTable = 0;
  let rows = 0;
  let ended = false;
  let batch: string[] = [];
  let batchBytes = 0;
  const flush = async () => {
    if (batch.length === 0) return;
    await insertRows(db, targets[table]!, `[${batch.join(",")}]`);
    batch = [];
    batchBytes = 0;
  };
  /** Past the tables whose rows are all in (empty ones included). */
  const advance = async () => {
    while (manifest && table < manifest.tables.length && inTable === manifest.tables[table]!.rows) {
      await flush();
      table += 1;
      inTable = 0;
    }
  };
  try {
    for await (const line of linesOf(plain)) {
      if (ended) throw new Error("records follow its end");
      if (!manifest) {
        const parsed = ManifestSchema.safeParse(parseJson(line, "manifest"));
        if (!parsed.success) throw new Error("its manifest is malformed");
        manifest = parsed.data;
        targets = await targetsOf(db, backup.file, manifest);
        await setReplicationRole(db, "replica");
        for (const target of targets) await emptyTable(db, target.name);
        await advance();
        continue;
      }
      if (table === manifest.tables.length) {
        const end = EndSchema.safeParse(parseJson(line, "end record"));
        if (!end.success || end.data.rows !== rows) throw new Error("its end record does not match its rows");
        ended = true;
        continue;
      }
      batch.push(line);
      batchBytes += line.length;
      inTable += 1;
      rows += 1;
      if (batch.length >= BATCH_ROWS || batchBytes >= BATCH_BYTES) await flush();
      await advance();
    }
  } catch (error) {
    const ours = error instanceof BackupRefusal || error instanceof SealedStreamError;
    if (ours || (error as { code?: unknown }).code !== undefined) throw error;
    throw new BackupRefusal(
      `restore refused: ${backup.file} is damaged (${(error as Error).message}); nothing was restored`,
    );
  }
  if (!manifest || !ended)
    throw new BackupRefusal(`restore refused: ${backup.file} is damaged (its records end early); nothing was restored`);
  return { tables: manifest.tables.length, rows, sequences: manifest.sequences };
};
