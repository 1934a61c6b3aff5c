import type { Database } from "../../../db/database";
import { secretObject } from "../secret-access";
import { findFolderPlace } from "../secret.repository";
import { findLatestVersion } from "./version.repository";

/**
 * The permission object of a secret as it is now (also after a deletion): the name, folder and
 * tags of its newest version, which every write records. Undefined when nothing of it is left.
 */
export const currentObjectOf = async (db: Database, secretId: string) => {
  const latest = await findLatestVersion(db, secretId);
  const place = latest ? await findFolderPlace(db, latest.folder_id) : undefined;
  if (!latest || !place) return undefined;
  return secretObject(
    place.env_slug,
    place.path,
    latest.key,
    latest.tags.map((t) => t.slug),
  );
};
