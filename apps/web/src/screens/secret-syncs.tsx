import { useState } from "react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { SECRET_SYNC_DESTINATIONS, type SecretSync, type SecretSyncDestination } from "@keyward/contract";
import { ok } from "@keyward/client";
import { useClient } from "../session";
import { Badge, Button, ErrorBanner, Loading, TableHead, formatDateTime } from "../ui/components";
import {
  DeleteSyncDialog,
  ImportDialog,
  NoSyncs,
  PlanDialog,
  RemoveSyncedDialog,
  StatusBadge,
  destinationName,
  isKnownDestination,
  syncActions,
} from "./secret-sync-parts";
import { NewSyncDialog } from "./secret-sync-new";
import type { Project } from "./types";

const COLUMNS = ["Name", "Destination", "Source", "Connection", "Auto-sync", "Status", "Last synced", "Message"];

type Listed = { secretSyncs: SecretSync[] };
type Opened = {
  kind: "plan" | "remove" | "import" | "delete";
  sync: SecretSync;
  destination: SecretSyncDestination;
} | null;

/**
 * How often the list is asked again: every second while a run is queued or under way (so "Sync now"
 * is seen through to its end), every five while a failed run waits for its next attempt, else never.
 */
const refreshEvery = (data: Listed | undefined) => {
  const list = data?.secretSyncs ?? [];
  if (list.some((sync) => sync.syncStatus === "pending" || sync.syncStatus === "running")) return 1_000;
  return list.some((sync) => sync.nextAttemptAt) ? 5_000 : false;
};

/** The last run's word: the server's message (what was left alone, or why it failed) and any retry. */
const SyncMessage = ({ sync }: { sync: SecretSync }) => (
  <div className="small">
    {sync.lastSyncMessage ? (
      <div className={sync.syncStatus === "failed" ? "field-error" : undefined}>{sync.lastSyncMessage}</div>
    ) : null}
    {sync.nextAttemptAt ? <div className="muted">Next attempt {formatDateTime(sync.nextAttemptAt)}</div> : null}
    {sync.removeStatus === "failed" ? (
      <div className="field-error">Removal failed: {sync.lastRemoveMessage}</div>
    ) : sync.removeStatus === "succeeded" ? (
      <div className="muted">Synced secrets removed {formatDateTime(sync.lastRemovedAt)}</div>
    ) : null}
    {!sync.lastSyncMessage && !sync.nextAttemptAt && !sync.removeStatus ? <span className="muted">—</span> : null}
  </div>
);

/** One sync with its actions; a refused action shows the server's message under the row. */
const SyncRow = ({
  sync,
  onChanged,
  onOpen,
}: {
  sync: SecretSync;
  onChanged: (sync: SecretSync) => void;
  onOpen: (opened: Opened) => void;
}) => {
  const client = useClient();
  const destination = isKnownDestination(sync.destination) ? sync.destination : null;
  const syncNow = useMutation({
    mutationFn: (known: SecretSyncDestination) => syncActions(client, known).syncNow(sync.id),
    onSuccess: onChanged,
  });
  const source = `${sync.environment?.slug ?? "—"} ${sync.folder?.path ?? "(folder deleted)"}`;
  return (
    <>
      <tr>
        <th scope="row">{sync.name}</th>
        <td>{destinationName(sync.destination)}</td>
        <td>
          <code>{source}</code>
        </td>
        <td>{sync.connection.name}</td>
        <td>{sync.isAutoSyncEnabled ? <Badge tone="ok">on</Badge> : <Badge>off</Badge>}</td>
        <td data-testid="sync-status">
          <StatusBadge status={sync.syncStatus} />
        </td>
        <td className="small">{formatDateTime(sync.lastSyncedAt)}</td>
        <td>
          <SyncMessage sync={sync} />
        </td>
        <td>
          {destination ? (
            <div className="row-actions">
              <Button variant="secondary" onClick={() => onOpen({ kind: "plan", sync, destination })}>
                Plan
              </Button>
              <Button disabled={syncNow.isPending} onClick={() => syncNow.mutate(destination)}>
                Sync now
              </Button>
              {SECRET_SYNC_DESTINATIONS[destination].canImportSecrets ? (
                <Button variant="secondary" onClick={() => onOpen({ kind: "import", sync, destination })}>
                  Import
                </Button>
              ) : null}
              <Button variant="danger" onClick={() => onOpen({ kind: "remove", sync, destination })}>
                Remove synced secrets
              </Button>
              <Button variant="danger" onClick={() => onOpen({ kind: "delete", sync, destination })}>
                Delete
              </Button>
            </div>
          ) : (
            <span className="muted small">Not handled by this console</span>
          )}
        </td>
      </tr>
      {syncNow.error ? (
        <tr>
          <td colSpan={COLUMNS.length + 1}>
            <ErrorBanner error={syncNow.error} />
          </td>
        </tr>
      ) : null}
    </>
  );
};

/** The project's secret syncs: where each folder is pushed, how its last run went, and what the next would do. */
export const SecretSyncs = ({ project }: { project: Project }) => {
  const client = useClient();
  const queryClient = useQueryClient();
  const projectId = project.id;
  const key = ["secret-syncs", projectId];
  const [opened, setOpened] = useState<Opened>(null);
  const [creating, setCreating] = useState(false);
  const syncs = useQuery({
    queryKey: key,
    queryFn: () => ok(client.secretSyncs.listAll({ query: { projectId } })),
    refetchInterval: (query) => refreshEvery(query.state.data),
  });
  // An action's answer is the sync as it now stands: shown at once, and the list follows it from there.
  const changed = (next: SecretSync) =>
    queryClient.setQueryData<Listed>(key, (old) =>
      old ? { secretSyncs: old.secretSyncs.map((sync) => (sync.id === next.id ? next : sync)) } : old,
    );
  const list = [...(syncs.data?.secretSyncs ?? [])].sort((a, b) => a.name.localeCompare(b.name));
  const added = (sync: SecretSync) =>
    queryClient.setQueryData<Listed>(key, (old) => (old ? { secretSyncs: [...old.secretSyncs, sync] } : old));
  return (
    <div className="stack">
      <div className="toolbar">
        <Button onClick={() => setCreating(true)}>New sync</Button>
      </div>
      <ErrorBanner error={syncs.error} />
      {syncs.isPending ? <Loading what="syncs" /> : null}
      {syncs.data && list.length === 0 ? <NoSyncs /> : null}
      {list.length > 0 ? (
        <table className="table" aria-label="Secret syncs">
          <TableHead columns={COLUMNS} actions />
          <tbody>
            {list.map((sync) => (
              <SyncRow key={sync.id} sync={sync} onChanged={changed} onOpen={setOpened} />
            ))}
          </tbody>
        </table>
      ) : null}
      {opened?.kind === "plan" ? (
        <PlanDialog sync={opened.sync} destination={opened.destination} onClose={() => setOpened(null)} />
      ) : null}
      {creating ? <NewSyncDialog project={project} onCreated={added} onClose={() => setCreating(false)} /> : null}
      {opened?.kind === "import" ? (
        <ImportDialog
          sync={opened.sync}
          destination={opened.destination}
          onImported={changed}
          onClose={() => setOpened(null)}
        />
      ) : null}
      {opened?.kind === "delete" ? (
        <DeleteSyncDialog
          sync={opened.sync}
          destination={opened.destination}
          onDeleted={() => void queryClient.invalidateQueries({ queryKey: key })}
          onClose={() => setOpened(null)}
        />
      ) : null}
      {opened?.kind === "remove" ? (
        <RemoveSyncedDialog
          sync={opened.sync}
          destination={opened.destination}
          onRemoved={changed}
          onClose={() => setOpened(null)}
        />
      ) : null}
    </div>
  );
};
