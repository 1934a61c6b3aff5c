import type { Database } from "../../../db/database";
import { listImportGraph } from "../../secret-imports/secret-import.service";
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

type ImportLink = Awaited<ReturnType<typeof listImportGraph>>[number];

const placeKey = (envId: string, path: string) => `${envId}\u0000${path}`;

/**
 * The links one direct import leads to, breadth-first, itself first: each (environment, path) once,
 * a link whose source folder does not exist left out, no deeper than MAX_IMPORT_DEPTH.
 */
const walkFrom = (top: ImportLink, linksOf: ReadonlyMap<string, ImportLink[]>) => {
  const visited = new Set([placeKey(top.import_env, top.import_path)]);
  const walked: ImportLink[] = [];
  let frontier = top.source_folder_id === null ? [] : [top];
  for (let depth = 0; depth < MAX_IMPORT_DEPTH && frontier.length > 0; depth += 1) {
    const next: ImportLink[] = [];
    for (const link of frontier) {
      walked.push(link);
      if (depth + 1 >= MAX_IMPORT_DEPTH) continue;
      for (const nested of linksOf.get(link.source_folder_id!) ?? []) {
        const key = placeKey(nested.import_env, nested.import_path);
        if (visited.has(key) || nested.source_folder_id === null) continue;
        visited.add(key);
        next.push(nested);
      }
    }
    frontier = next;
  }
  return walked;
};

/** The import links of some folders walked (see walkFrom), and every folder whose rows they bring. */
type ImportPlan = { tops: ImportLink[]; walks: ImportLink[][]; sources: Set<string> };

/** The first of the two statements of an import read: the import graph of these folders, walked. */
const planImports = async (db: Database, folderIds: readonly string[]): Promise<ImportPlan> => {
  const linksOf = groupBy(await listImportGraph(db, folderIds, MAX_IMPORT_DEPTH), (link) => link.folder_id);
  const tops = folderIds.flatMap((id) => linksOf.get(id) ?? []);
  const walks = tops.map((top) => walkFrom(top, linksOf));
  const sources = new Set(walks.flatMap((walked) => walked.map((link) => link.source_folder_id!)));
  return { tops, walks, sources };
};

/** The groups of a plan, from the rows of (at least) its sources. */
const groupImports = ({ tops, walks }: ImportPlan, rows: readonly SecretRow[]): ImportGroup[] => {
  const rowsOf = groupBy(rows, (row) => row.folder_id);
  return tops.map((top, i) => ({
    environment: top.env_slug,
    secretPath: top.import_path,
    folderId: top.source_folder_id,
    secrets: walks[i]!.flatMap((link) =>
      (rowsOf.get(link.source_folder_id!) ?? []).map((row) => ({
        row,
        environment: link.env_slug,
        secretPath: link.import_path,
      })),
    ),
  }));
};

/**
 * The imports of some folders resolved on read: one group per direct import, in stored order; the
 * secrets of nested imports are folded into the group that led to them, up to depth 10, each
 * (environment, path) once per group. Two statements whatever the depth and the number of imports:
 * the import graph, then the rows of every folder it reaches. With `ownerId`, that person's personal
 * secrets stand in for the shared ones of their keys.
 */
export const resolveImports = async (
  db: Database,
  folderIds: readonly string[],
  ownerId?: string,
): Promise<ImportGroup[]> => {
  const plan = await planImports(db, folderIds);
  return groupImports(plan, await listVisibleSecretsOfFolders(db, [...plan.sources], ownerId));
};

/**
 * The rows of some folders and their imports' groups, in two statements: the import graph, then the
 * rows of the folders and of every other source in one read (a source that is also one of the folders
 * is read once; its rows then serve both).
 */
export const readFoldersWithImports = async (db: Database, folderIds: readonly string[], ownerId?: string) => {
  const plan = await planImports(db, folderIds);
  const own = new Set(folderIds);
  const others = [...plan.sources].filter((id) => !own.has(id));
  const all = await listVisibleSecretsOfFolders(db, [...folderIds, ...others], ownerId);
  const rows = others.length === 0 ? all : all.filter((row) => own.has(row.folder_id));
  return { rows, groups: groupImports(plan, all) };
};
