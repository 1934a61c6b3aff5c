import type { RequestContext } from "../../context";
import { afterCommit, collectBeforeCommit, type Tx } from "../../db/transaction";
import { lookupFolderPlaces } from "../folders/folder.service";
import { listImportingFolders } from "../secret-imports/secret-import.service";
import type { FolderPlace } from "../folders/folder.service";
import { insertEvents, notifyEvents, takeEventNumbers, type NewEvent } from "./secret-events.repository";

/** What a write noted: a secret created, updated or deleted in a folder, or a folder's imports changed. */
export type NotedChange =
  | { kind: "secret"; type: "create" | "update" | "delete"; folderId: string; key: string; tags: readonly string[] }
  | { kind: "imports"; folderId: string };

/** Imports are followed this deep, as secret reads follow them. */
const IMPORT_DEPTH = 10;

const EVENT_NAMES = { create: "secret:create", update: "secret:update", delete: "secret:delete" } as const;

/** The folders that see a change of `folderIds` through their imports, however indirectly (bounded). */
const importersOf = async (trx: Tx, places: Map<string, FolderPlace>, folderIds: readonly string[]) => {
  const found = new Set<string>();
  let frontier = folderIds.map((id) => places.get(id)).filter((p): p is FolderPlace => p !== undefined);
  for (let depth = 0; depth < IMPORT_DEPTH && frontier.length > 0; depth += 1) {
    const next = (
      await listImportingFolders(
        trx,
        frontier.map((p) => ({ envId: p.env_id, path: p.path })),
      )
    ).filter((id) => !found.has(id));
    for (const id of next) found.add(id);
    for (const place of await lookupFolderPlaces(trx, next)) places.set(place.folder_id, place);
    frontier = next.map((id) => places.get(id)).filter((p): p is FolderPlace => p !== undefined);
  }
  return [...found];
};

/** Turns one transaction's noted changes into events: one per folder and kind, numbered per project. */
const recordEvents = (ctx: Pick<RequestContext, "deps">) => async (trx: Tx, changes: NotedChange[]) => {
  const folderIds = [...new Set(changes.map((c) => c.folderId))];
  const places = new Map((await lookupFolderPlaces(trx, folderIds)).map((p) => [p.folder_id, p]));
  const byProject = new Map<string, NewEvent[]>();
  const add = (place: FolderPlace, event: Omit<NewEvent, "environment" | "secret_path">) => {
    const list = byProject.get(place.project_id) ?? [];
    list.push({ ...event, environment: place.env_slug, secret_path: place.path });
    byProject.set(place.project_id, list);
  };
  // One event per (folder, kind of change), its keys in the order changed; a key named twice keeps its last tags.
  const grouped = new Map<string, { place: FolderPlace; type: string; secrets: Map<string, string[]> }>();
  for (const change of changes) {
    if (change.kind !== "secret") continue;
    const place = places.get(change.folderId);
    if (!place) continue;
    const id = `${change.folderId}\u0000${change.type}`;
    const group = grouped.get(id) ?? { place, type: EVENT_NAMES[change.type], secrets: new Map() };
    group.secrets.set(change.key, [...change.tags]);
    grouped.set(id, group);
  }
  for (const group of grouped.values())
    add(group.place, {
      event_type: group.type,
      secrets: [...group.secrets].map(([key, tags]) => ({ key, tags })),
    });
  // A folder whose imports changed, and every folder importing a changed folder, sees an import mutation.
  const importsChanged = changes.filter((c) => c.kind === "imports").map((c) => c.folderId);
  for (const id of new Set([...importsChanged, ...(await importersOf(trx, places, folderIds))])) {
    const place = places.get(id);
    if (place) add(place, { event_type: "secret:import-mutation", secrets: [] });
  }
  // Projects in a fixed order, so two changes spanning the same projects take their heads alike.
  for (const projectId of [...byProject.keys()].sort()) {
    const events = byProject.get(projectId)!;
    const last = await takeEventNumbers(trx, projectId, events.length);
    await insertEvents(trx, projectId, last - events.length + 1, events);
    if (ctx.deps.dbKind === "postgres") await notifyEvents(trx, projectId);
    afterCommit(trx, () => ctx.deps.eventHub.wake(ctx.deps, projectId, last));
  }
};

const EVENT_LOG = {};

/**
 * Note a change for the project events stream. Its events are written once, just before the
 * transaction commits (so a rolled-back change publishes nothing), and subscribers are woken after
 * it committed: on this instance at once, on the others through PostgreSQL's NOTIFY, which is
 * delivered only on commit.
 */
export const noteChange = (ctx: Pick<RequestContext, "deps">, trx: Tx, change: NotedChange) =>
  collectBeforeCommit(trx, EVENT_LOG, change, recordEvents(ctx));
