import type { SecretImport } from "@keyward/contract";
import { toIso } from "../../lib/dates";
import type { SecretImportRow } from "./secret-import.repository";

export const toSecretImportDto = (row: SecretImportRow): SecretImport => ({
  id: row.id,
  version: row.version,
  importPath: row.import_path,
  position: row.position,
  folderId: row.folder_id,
  importEnv: { name: row.env_name, slug: row.env_slug, id: row.import_env },
  isReplication: row.is_replication,
  isReplicationSuccess: row.is_replication_success,
  replicationStatus: row.replication_status,
  lastReplicated: toIso(row.last_replicated),
  isReserved: row.is_reserved,
  createdAt: toIso(row.created_at),
  updatedAt: toIso(row.updated_at),
});
