import type { Folder } from "@keyward/contract";
import { toIso } from "../../lib/dates";
import type { FolderRow } from "./folder.repository";

export const toFolderDto = (row: FolderRow): Folder => ({
  id: row.id,
  name: row.name,
  envId: row.env_id,
  parentId: row.parent_id,
  description: row.description,
  version: row.version,
  isReserved: row.is_reserved,
  lastSecretModified: toIso(row.last_secret_modified),
  createdAt: toIso(row.created_at),
  updatedAt: toIso(row.updated_at),
});
