import type { Database } from "../../db/database";
import { findEventHead, findOldestEvent, listChangedPlaces } from "./secret-events.repository";

export type ChangedPlaces = {
  /** The project's last event number when read. */
  head: number;
  /** Each folder (environment and path) with events after the cursor, and its last event number. */
  places: { environment: string; secretPath: string; lastSeq: number }[];
  /** The oldest event still kept (undefined: none): a cursor before it missed pruned events. */
  oldest: number | undefined;
};

/**
 * What changed in a project after event `afterSeq`, by folder, for work that follows the events log
 * without streaming it (secret syncs). A folder whose imports bring the change has its own event.
 */
export const changedPlacesSince = async (db: Database, projectId: string, afterSeq: number): Promise<ChangedPlaces> => {
  const head = await findEventHead(db, projectId);
  if (head <= afterSeq) return { head, places: [], oldest: undefined };
  const [places, oldest] = await Promise.all([
    listChangedPlaces(db, projectId, afterSeq, head),
    findOldestEvent(db, projectId),
  ]);
  return { head, places, oldest };
};

/** The last event number of a project (0 before its first): where new work following the log starts. */
export const projectEventHead = (db: Database, projectId: string) => findEventHead(db, projectId);
