import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { z } from "zod";
import type { SecretBox } from "../../crypto/envelope";
import { chunkKey, encodePrelude } from "../../crypto/sealed-stream";

/**
 * A backup file: a clear header (below) and then, sealed in chunks under a key derived from the root
 * key (`crypto/sealed-stream.ts`), the deflated records: a manifest line (each table's name, columns
 * and row count, each sequence's value), each table's rows in that order (one JSON array of text
 * forms per line), and an end line. The header names no table; every chunk authenticates it.
 */
export const BACKUP_FORMAT = 1;

export const HeaderSchema = z.object({
  format: z.literal(BACKUP_FORMAT),
  keyward: z.string(),
  source: z.enum(["postgres", "pglite"]),
  migration: z.string(),
  createdAt: z.string(),
  tables: z.number().int().min(0),
  rows: z.number().int().min(0),
  /** HMAC of a fixed label under a key derived from the root key: tells a wrong key before anything is opened. */
  keyCheck: z.string(),
  /** The file's salt: its chunk key is derived from the backup key and this. */
  salt: z.string(),
  compression: z.literal("deflate-raw"),
  /**
   * The instance's live root-key versions as its seal sealed them (ENCRYPTION_KEY's or the HSM's) and
   * its derivation secret sealed under them: a restore (or the backup command) opens them with its own
   * seal, and the file key and key check come from that derivation secret. Absent in files of
   * instances from before root keys had versions (their key is ENCRYPTION_KEY itself).
   */
  root: z
    .object({
      rootKeys: z.array(
        z.object({
          version: z.number().int().min(1),
          state: z.enum(["active", "retiring"]),
          sealed: z.string(),
          sealedBy: z.enum(["SOFTWARE", "HSM"]),
          fingerprint: z.string(),
        }),
      ),
      derivation: z.string(),
    })
    .optional(),
});
export type BackupHeader = z.infer<typeof HeaderSchema>;

export const ManifestSchema = z.object({
  tables: z.array(z.object({ name: z.string(), columns: z.array(z.string()), rows: z.number().int().min(0) })),
  sequences: z.array(z.object({ name: z.string(), value: z.string().regex(/^-?\d+$/), called: z.boolean() })),
});
export type BackupManifest = z.infer<typeof ManifestSchema>;

export const EndSchema = z.object({ end: z.literal(true), rows: z.number().int().min(0) });

const KEY_CHECK_LABEL = "keyward backup key check v1";

export const keyCheckOf = (secretBox: SecretBox) =>
  createHmac("sha256", secretBox.deriveKey("backup-check")).update(KEY_CHECK_LABEL).digest("base64");

export const keyCheckMatches = (secretBox: SecretBox, header: BackupHeader) => {
  const ours = Buffer.from(keyCheckOf(secretBox), "base64");
  const theirs = Buffer.from(header.keyCheck, "base64");
  return ours.length === theirs.length && timingSafeEqual(ours, theirs);
};

/** The key a file's chunks are sealed under: the root key's "backup" key with the file's salt. */
export const fileKeyOf = (secretBox: SecretBox, header: BackupHeader) =>
  chunkKey(secretBox.deriveKey("backup"), Buffer.from(header.salt, "base64"));

export const newHeader = (
  secretBox: SecretBox,
  fields: Pick<BackupHeader, "keyward" | "source" | "migration" | "tables" | "rows" | "root">,
): BackupHeader => ({
  format: BACKUP_FORMAT,
  ...fields,
  createdAt: new Date().toISOString(),
  keyCheck: keyCheckOf(secretBox),
  salt: randomBytes(32).toString("base64"),
  compression: "deflate-raw",
});

export const preludeOf = (header: BackupHeader) => encodePrelude(header);
