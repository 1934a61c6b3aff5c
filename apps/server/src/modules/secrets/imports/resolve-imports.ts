import type { Database } from "../../../db/database";
import { listImportLinksOfFolders } from "../../secret-imports/secret-import.service";
import type { SecretRow } from "../secret.repository";
import { listVisibleSecretsOfFolders } from "../secret-source";

/** How deep imports of imports are followed. */
export const MAX_IMPORT_DEPTH = 10;

export type ImportedRow = { row: SecretRow; environment: string; secretPath: string };

/** One direct import of a listed folder, with the secrets it brings: its own first, then its imports' (breadth-first). */
export type ImportGroup = {
  environment: string;
  secretPath: string;
  folderId: string | null;
  secrets: ImportedRow[];
};

const groupBy = <T>(items: readonly T[], keyOf: (item: T) => string) => {
  const out = new Map<string, T[]>();
  for (const item of items) {
    const key = keyOf(item);
    const list = out.get(key);
    if (list) list.push(item);
    else out.set(key, [item]);
  }
  return out;
};

type ImportLink = Awaited<ReturnType<typeof listImportLinksOfFolders>>[number];

const placeKey = (envId: string, path: string) => `${envId}\u0000${path}`;

/** Imports of `folderIds`, in the order of `folderIds`, then by position. */
const importsInOrder = async (db: Database, folderIds: readonly string[]) => {
  const rows = await listImportLinksOfFolders(db, folderIds);
  const order = new Map(folderIds.map((id, i) => [id, i]));
  return rows.sort((a, b) => order.get(a.folder_id)! - order.get(b.folder_id)! || a.position - b.position);
};

/**
 * The imports of some folders resolved on read: one group per direct import, in stored order; the
 * secrets of nested imports are folded into the group that led to them, up to depth 10, each
 * (environment, path) once per group. Two queries per level, whatever the number of imports. With
 * `ownerId`, that person's personal secrets stand in for the shared ones of their keys.
 */
export const resolveImports = async (
  db: Database,
  folderIds: readonly string[],
  ownerId?: string,
): Promise<ImportGroup[]> => {
  const tops = await importsInOrder(db, folderIds);
  const groups: ImportGroup[] = tops.map((t) => ({
    environment: t.env_slug,
    secretPath: t.import_path,
    folderId: t.source_folder_id,
    secrets: [],
  }));
  const visited = tops.map((t) => new Set([placeKey(t.import_env, t.import_path)]));
  type Step = { group: number; link: ImportLink };
  let frontier: Step[] = tops.map((link, group) => ({ group, link })).filter((s) => s.link.source_folder_id !== null);
  for (let depth = 0; depth < MAX_IMPORT_DEPTH && frontier.length > 0; depth += 1) {
    const ids = [...new Set(frontier.map((s) => s.link.source_folder_id!))];
    const [rows, nested] = await Promise.all([
      listVisibleSecretsOfFolders(db, ids, ownerId),
      depth + 1 < MAX_IMPORT_DEPTH ? importsInOrder(db, ids) : Promise.resolve([]),
    ]);
    const rowsOf = groupBy(rows, (r) => r.folder_id);
    const nestedOf = groupBy(nested, (n) => n.folder_id);
    const next: Step[] = [];
    for (const step of frontier) {
      const folderId = step.link.source_folder_id!;
      for (const row of rowsOf.get(folderId) ?? [])
        groups[step.group]!.secrets.push({ row, environment: step.link.env_slug, secretPath: step.link.import_path });
      for (const link of nestedOf.get(folderId) ?? []) {
        const key = placeKey(link.import_env, link.import_path);
        if (visited[step.group]!.has(key) || link.source_folder_id === null) continue;
        visited[step.group]!.add(key);
        next.push({ group: step.group, link });
      }
    }
    frontier = next;
  }
  return groups;
};
