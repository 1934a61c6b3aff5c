import type { AppDeps, AppJob } from "../../context";
import { inTransaction } from "../../db/transaction";
import { loop } from "../../lib/loop";
import { changedPlacesSince, projectEventHead } from "../events/event-places";
import { lookupFolderPlaces } from "../folders/folder.service";
import { SyncBusyError } from "./sync-engine";
import { runSync } from "./sync-run";
import {
  advanceCursor,
  findDueSyncs,
  listProjectsBehind,
  listSyncsBehind,
  markStaleSyncs,
} from "./secret-sync.repository";

/** Syncs taken per pass, and connections worked on at once (each connection's syncs one after another). */
const BATCH = 50;
const PARALLEL_CONNECTIONS = 4;
/** Projects looked at per pass for events no notice announced. */
const PROJECTS_PER_PASS = 100;

/**
 * Makes a project's auto syncs due whose folder has events they have not considered (a change in
 * it, or in a folder it imports), and moves every behind sync's cursor to the project's head. A sync
 * whose cursor is older than the oldest event kept missed pruned ones and runs to be safe.
 */
export const markChangedSyncs = async (deps: AppDeps, projectId: string) => {
  const head = await projectEventHead(deps.db, projectId);
  const behind = await listSyncsBehind(deps.db, projectId, head);
  if (behind.length === 0) return 0;
  const from = Math.min(...behind.map((s) => Number(s.event_cursor)));
  const changes = await changedPlacesSince(deps.db, projectId, from);
  const folderIds = behind.flatMap((s) => (s.folder_id ? [s.folder_id] : []));
  const places = new Map((await lookupFolderPlaces(deps.db, folderIds)).map((p) => [p.folder_id, p]));
  // Due at once: the job's wake-up already waited SECRET_SYNC_DEBOUNCE_MS for the burst to end.
  const dueAt = new Date(deps.clock.now());
  let marked = 0;
  for (const sync of behind) {
    const cursor = Number(sync.event_cursor);
    const place = sync.folder_id ? places.get(sync.folder_id) : undefined;
    const dirty =
      place !== undefined &&
      (changes.oldest === undefined ||
        changes.oldest > cursor + 1 ||
        changes.places.some(
          (c) =>
            c.lastSeq > cursor &&
            ((c.environment === place.env_slug && c.secretPath === place.path) ||
              sync.referenced_places.some((r) => r.environment === c.environment && r.secretPath === c.secretPath)),
        ));
    await advanceCursor(deps.db, sync.id, changes.head, dirty, dueAt);
    if (dirty) marked += 1;
  }
  return marked;
};

/**
 * One pass: every due sync not held by a live run. A connection's syncs run one after another,
 * different connections side by side; a sync another instance holds is left to it.
 */
export const runDueSyncs = async (deps: AppDeps) => {
  const due = await inTransaction(deps.db, (trx) => findDueSyncs(trx, new Date(deps.clock.now()), BATCH));
  const byConnection = new Map<string, string[]>();
  for (const { id, connection_id } of due)
    byConnection.set(connection_id, [...(byConnection.get(connection_id) ?? []), id]);
  const queues = [...byConnection.values()];
  let ran = 0;
  const worker = async () => {
    for (let queue = queues.shift(); queue; queue = queues.shift())
      for (const id of queue) {
        const outcome = await runSync(deps, id, "auto").catch((error: unknown) => {
          if (error instanceof SyncBusyError) return undefined;
          throw error;
        });
        if (outcome) ran += 1;
      }
  };
  await Promise.all(Array.from({ length: PARALLEL_CONNECTIONS }, worker));
  return { due: due.length, ran };
};

/**
 * A full pass: syncs behind their project's events are marked, so are syncs not pushed for
 * SECRET_SYNC_RECHECK_S (their run finds and corrects drift), then every due sync runs.
 */
export const syncPass = async (deps: AppDeps) => {
  for (const { project_id } of await listProjectsBehind(deps.db, PROJECTS_PER_PASS))
    await markChangedSyncs(deps, project_id);
  const now = deps.clock.now();
  await markStaleSyncs(deps.db, new Date(now - deps.env.SECRET_SYNC_RECHECK_S * 1_000), new Date(now));
  return runDueSyncs(deps);
};

/**
 * Secret syncs' background work on every instance: woken by each project's new events (this
 * instance's commits and, on PostgreSQL, every other's notices) after a short debounce, and by a
 * periodic pass for retries, triggers queued elsewhere and missed notices.
 */
export const secretSyncJob: AppJob = {
  name: "secret-sync",
  start: (deps) => {
    const onError = (error: unknown) => {
      deps.metrics.jobFailures.inc({ job: "secret-sync" });
      deps.logger.error({ err: error }, "secret sync pass failed");
    };
    let timer: NodeJS.Timeout | undefined;
    let tail: Promise<unknown> = Promise.resolve();
    // One pass at a time: a wake during a pass runs another after it.
    const serial = (work: () => Promise<unknown>) => {
      const run = tail.then(work);
      tail = run.catch(() => undefined);
      return run;
    };
    const changed = new Set<string>();
    let stopped = false;
    const soon = () => {
      if (stopped || timer) return;
      timer = setTimeout(() => {
        timer = undefined;
        const projects = [...changed];
        changed.clear();
        serial(async () => {
          for (const projectId of projects) await markChangedSyncs(deps, projectId);
          await runDueSyncs(deps);
        }).catch(onError);
      }, deps.env.SECRET_SYNC_DEBOUNCE_MS);
    };
    const unwatch = deps.eventHub.watch((projectId) => {
      changed.add(projectId);
      soon();
    });
    deps.secretSyncWake.wake = soon;
    const stopLoop = loop(deps.env.SECRET_SYNC_INTERVAL_MS, () => serial(() => syncPass(deps)), onError);
    return async () => {
      stopped = true;
      unwatch();
      deps.secretSyncWake.wake = () => undefined;
      clearTimeout(timer);
      await stopLoop();
      await tail;
    };
  },
};
