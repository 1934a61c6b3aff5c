import { useState } from "react";
import { useMutation, useQuery } from "@tanstack/react-query";
import {
  contract,
  SECRET_SYNC_DESTINATIONS,
  type SecretSync,
  type SecretSyncDestination,
  type SecretSyncPlan,
} from "@keyward/contract";
import { ok, type KeywardClient } from "@keyward/client";
import { useClient } from "../session";
import { Badge, Button, Dialog, Empty, ErrorBanner, Loading, SelectField } from "../ui/components";

/** The typed client's route group of each destination: the sync actions live under it. */
const ROUTE_GROUPS = {
  "aws-secrets-manager": "awsSecretsManager",
  "aws-parameter-store": "awsParameterStore",
  github: "github",
  "gcp-secret-manager": "gcpSecretManager",
  "azure-key-vault": "azureKeyVault",
} as const satisfies Record<SecretSyncDestination, keyof KeywardClient["secretSyncs"]>;

/** Whether the console knows how to act on a destination (a newer server may name others). */
export const isKnownDestination = (destination: string): destination is SecretSyncDestination =>
  Object.hasOwn(SECRET_SYNC_DESTINATIONS, destination);

/** A destination as people call it ("AWS Secrets Manager"), or its slug when the console does not know it. */
export const destinationName = (destination: string) =>
  isKnownDestination(destination) ? SECRET_SYNC_DESTINATIONS[destination].name : destination;

/** The destinations' contract route groups, by destination (the body schemas the console checks first). */
export const syncContractOf = (destination: SecretSyncDestination) => contract.secretSyncs[ROUTE_GROUPS[destination]];

type AwsRoutes = KeywardClient["secretSyncs"]["awsSecretsManager"];
/**
 * The routes every destination has, called with a body already checked against that destination's own
 * schema (`syncContractOf`); import exists only where the destination can show values.
 */
type CommonRoutes = Pick<AwsRoutes, "plan" | "syncSecrets" | "removeSecrets" | "delete"> & {
  create: (args: { body: unknown }) => ReturnType<AwsRoutes["create"]>;
  checkDestination: (args: { body: unknown }) => ReturnType<AwsRoutes["checkDestination"]>;
  planNew: (args: { body: unknown }) => ReturnType<AwsRoutes["planNew"]>;
  importSecrets?: AwsRoutes["importSecrets"];
};

/** What the console does with a sync, whatever its destination, each answering the server's body. */
export const syncActions = (client: KeywardClient, destination: SecretSyncDestination) => {
  const routes = client.secretSyncs[ROUTE_GROUPS[destination]] as unknown as CommonRoutes;
  const { importSecrets } = routes;
  return {
    plan: async (syncId: string): Promise<SecretSyncPlan> => (await ok(routes.plan({ params: { syncId } }))).plan,
    syncNow: async (syncId: string): Promise<SecretSync> =>
      (await ok(routes.syncSecrets({ params: { syncId } }))).secretSync,
    removeSecrets: async (syncId: string): Promise<SecretSync> =>
      (await ok(routes.removeSecrets({ params: { syncId } }))).secretSync,
    /** A new sync's first run, planned without creating it. */
    planNew: async (body: unknown): Promise<SecretSyncPlan> => (await ok(routes.planNew({ body }))).plan,
    create: async (body: unknown): Promise<SecretSync> => (await ok(routes.create({ body }))).secretSync,
    /** Whether another sync of the organization already writes where these settings point. */
    hasDuplicate: async (body: { projectId: string; connectionId: string; destinationConfig: unknown }) =>
      (await ok(routes.checkDestination({ body }))).hasDuplicate,
    delete: async (syncId: string, removeSecrets: boolean): Promise<SecretSync> =>
      (await ok(routes.delete({ params: { syncId }, query: { removeSecrets: removeSecrets ? "true" : "false" } })))
        .secretSync,
    importSecrets: importSecrets
      ? async (syncId: string, importBehavior: "prioritize-source" | "prioritize-destination"): Promise<SecretSync> =>
          (await ok(importSecrets({ params: { syncId }, query: { importBehavior } }))).secretSync
      : undefined,
  };
};

type SkipReason = SecretSyncPlan["skipped"][number]["reason"];

/** Why a run leaves a name alone, in plain words. */
export const SKIP_REASONS: Record<SkipReason, string> = {
  "exists-unowned": "exists at the destination, not written by this sync — left alone",
  "owned-by-another-sync": "written by another sync",
  "empty-value": "empty value",
  "invalid-name": "not a valid name there",
};

/** One group of the plan: its count in the heading and its names, or "none". */
const PlanGroup = ({ title, names }: { title: string; names: readonly string[] }) => (
  <section aria-label={title}>
    <h3 className="small">
      {title} ({names.length})
    </h3>
    {names.length === 0 ? (
      <p className="muted small">none</p>
    ) : (
      <ul className="chips">
        {names.map((name) => (
          <li key={name}>
            <code>{name}</code>
          </li>
        ))}
      </ul>
    )}
  </section>
);

/** What a plan says, group by group, with each skipped name's reason. */
export const PlanView = ({ plan }: { plan: SecretSyncPlan }) => (
  <div className="stack">
    <PlanGroup title="Will create" names={plan.create} />
    <PlanGroup title="Will update" names={plan.update} />
    <PlanGroup title="Will delete" names={plan.delete} />
    <PlanGroup title="Unchanged" names={plan.unchanged} />
    <section aria-label="Skipped">
      <h3 className="small">Skipped ({plan.skipped.length})</h3>
      {plan.skipped.length === 0 ? (
        <p className="muted small">none</p>
      ) : (
        <ul className="rows">
          {plan.skipped.map((skip) => (
            <li key={skip.key}>
              <code>{skip.key}</code> <span className="muted small">— {SKIP_REASONS[skip.reason]}</span>
            </li>
          ))}
        </ul>
      )}
    </section>
  </div>
);

/**
 * The sync's next run, asked of the server when the dialog opens: nothing changes at the destination
 * or in the folder. Each opening asks again, so the plan is never an old one.
 */
export const PlanDialog = ({
  sync,
  destination,
  onClose,
}: {
  sync: SecretSync;
  destination: SecretSyncDestination;
  onClose: () => void;
}) => {
  const client = useClient();
  const plan = useQuery({
    queryKey: ["secret-sync-plan", sync.id],
    queryFn: () => syncActions(client, destination).plan(sync.id),
    staleTime: 0,
    gcTime: 0,
  });
  return (
    <Dialog title={`Plan of ${sync.name}`} onClose={onClose}>
      <p className="muted small">
        What the next run would do at {destinationName(sync.destination)}. Nothing is changed by asking.
      </p>
      <ErrorBanner error={plan.error} />
      {plan.isPending ? <Loading what="plan" /> : null}
      {plan.data ? <PlanView plan={plan.data} /> : null}
    </Dialog>
  );
};

/**
 * Asks before removing the sync's secrets from the destination, saying that only the names this sync
 * wrote go: whatever else the destination holds stays, and the sync itself is kept.
 */
export const RemoveSyncedDialog = ({
  sync,
  destination,
  onRemoved,
  onClose,
}: {
  sync: SecretSync;
  destination: SecretSyncDestination;
  onRemoved: (sync: SecretSync) => void;
  onClose: () => void;
}) => {
  const client = useClient();
  const remove = useMutation({
    mutationFn: () => syncActions(client, destination).removeSecrets(sync.id),
    onSuccess: (answer) => {
      onRemoved(answer);
      if (answer.removeStatus !== "failed") onClose();
    },
  });
  const failed = remove.data?.removeStatus === "failed" ? remove.data.lastRemoveMessage : null;
  return (
    <Dialog title={`Remove synced secrets of ${sync.name}?`} onClose={onClose}>
      <p>
        Only the secrets this sync wrote to {destinationName(sync.destination)} are removed. Secrets it did not write
        stay where they are, and the sync itself is kept.
      </p>
      <ErrorBanner error={remove.error ?? (failed ? `Removal failed: ${failed}` : null)} />
      <div className="form-actions">
        <Button variant="danger" disabled={remove.isPending} onClick={() => remove.mutate()}>
          Remove synced secrets
        </Button>
        <Button variant="secondary" onClick={onClose}>
          Cancel
        </Button>
      </div>
    </Dialog>
  );
};

const STATUS_TONES = { succeeded: "ok", failed: "bad", pending: "warn", running: "warn" } as const;

/** A job's status as a badge; a sync that never ran says so. */
export const StatusBadge = ({ status }: { status: SecretSync["syncStatus"] }) =>
  status ? <Badge tone={STATUS_TONES[status]}>{status}</Badge> : <Badge>never synced</Badge>;

/** "A, B or C": the destinations a sync can push to, as the contract lists them. */
const DESTINATION_NAMES = new Intl.ListFormat("en", { type: "disjunction" }).format(
  Object.values(SECRET_SYNC_DESTINATIONS).map((d) => d.name),
);

/** What a sync is, for a project that has none. */
export const NoSyncs = () => (
  <Empty>
    No syncs yet. A sync pushes the secrets of one folder to {DESTINATION_NAMES}, and keeps them there as the folder
    changes. It never touches destination secrets it did not write.
  </Empty>
);

/**
 * Deleting a sync: by default the destination keeps what the sync wrote; ticked, exactly those secrets
 * are removed first (never any other), and the sync goes only once they are.
 */
export const DeleteSyncDialog = ({
  sync,
  destination,
  onDeleted,
  onClose,
}: {
  sync: SecretSync;
  destination: SecretSyncDestination;
  onDeleted: () => void;
  onClose: () => void;
}) => {
  const client = useClient();
  const [removeSecrets, setRemoveSecrets] = useState(false);
  const remove = useMutation({
    mutationFn: () => syncActions(client, destination).delete(sync.id, removeSecrets),
    onSuccess: () => {
      onDeleted();
      onClose();
    },
  });
  return (
    <Dialog title={`Delete sync ${sync.name}?`} onClose={onClose}>
      <p>The sync stops. What it wrote to {destinationName(sync.destination)} stays there unless you tick:</p>
      <label className="check">
        <input type="checkbox" checked={removeSecrets} onChange={(e) => setRemoveSecrets(e.target.checked)} /> Also
        remove the secrets this sync wrote (only those)
      </label>
      <ErrorBanner error={remove.error} />
      <div className="form-actions">
        <Button variant="danger" disabled={remove.isPending} onClick={() => remove.mutate()}>
          Delete sync
        </Button>
        <Button variant="secondary" onClick={onClose}>
          Cancel
        </Button>
      </div>
    </Dialog>
  );
};

/** Copying the destination's secrets into the folder: the names it lacks, or differing values too. */
export const ImportDialog = ({
  sync,
  destination,
  onImported,
  onClose,
}: {
  sync: SecretSync;
  destination: SecretSyncDestination;
  onImported: (sync: SecretSync) => void;
  onClose: () => void;
}) => {
  const client = useClient();
  const [behavior, setBehavior] = useState<"prioritize-source" | "prioritize-destination">("prioritize-source");
  const importSecrets = syncActions(client, destination).importSecrets;
  const run = useMutation({
    mutationFn: () => importSecrets!(sync.id, behavior),
    onSuccess: (answer) => {
      onImported(answer);
      onClose();
    },
  });
  return (
    <Dialog
      title={`Import into ${sync.folder?.path ?? "the folder"} from ${destinationName(sync.destination)}`}
      onClose={onClose}
    >
      <SelectField
        label="Which secrets"
        value={behavior}
        onChange={(value) => setBehavior(value as typeof behavior)}
        options={[
          { value: "prioritize-source", label: "Only names the folder lacks" },
          { value: "prioritize-destination", label: "Also replace values that differ" },
        ]}
      />
      <ErrorBanner error={run.error} />
      <div className="form-actions">
        <Button disabled={run.isPending || !importSecrets} onClick={() => run.mutate()}>
          Import
        </Button>
        <Button variant="secondary" onClick={onClose}>
          Cancel
        </Button>
      </div>
    </Dialog>
  );
};
