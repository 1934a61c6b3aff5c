import type { Database } from "../../../db/database";
import { listSecretsOfFolders } from "../secret-list.repository";
import { findEnvironmentsBySlugs, resolveFolder } from "../secret.repository";
import type { ReferenceTargets } from "./validate";

/** Reference validation reads (keys and tag slugs only, never values) through the writer's transaction. */
export const referenceTargets = (db: Database, projectId: string): ReferenceTargets => {
  const folders = new Map<string, Promise<Map<string, string[]> | undefined>>();
  return {
    environments: async (slugs) => new Set((await findEnvironmentsBySlugs(db, projectId, slugs)).map((e) => e.slug)),
    folderKeys: (environment, secretPath) => {
      const key = `${environment}\u0000${secretPath}`;
      let pending = folders.get(key);
      if (!pending) {
        pending = (async () => {
          const place = await resolveFolder(db, projectId, environment, secretPath);
          if (!place?.folder_id) return undefined;
          const rows = await listSecretsOfFolders(db, [place.folder_id]);
          return new Map(rows.map((r) => [r.key, r.tags.map((t) => t.slug)]));
        })();
        folders.set(key, pending);
      }
      return pending;
    },
  };
};
