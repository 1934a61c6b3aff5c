import { useState, type FormEvent } from "react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { SECRET_SYNC_DESTINATIONS, type SecretSync, type SecretSyncDestination } from "@keyward/contract";
import { ok } from "@keyward/client";
import { useClient } from "../session";
import { Button, Dialog, ErrorBanner, Field, Loading, SelectField } from "../ui/components";
import type { FieldErrors } from "../ui/form";
import { PlanView, syncActions, syncContractOf } from "./secret-sync-parts";
import type { Project } from "./types";

/** Where each destination's settings start: the fields its contract asks for. */
const TEMPLATES: Record<SecretSyncDestination, Record<string, unknown>> = {
  "aws-secrets-manager": { region: "us-east-1", mappingBehavior: "one-to-one" },
  "aws-parameter-store": { region: "us-east-1", path: "/app/" },
  github: { scope: "repository", owner: "", repo: "" },
  "gcp-secret-manager": { projectId: "" },
  "azure-key-vault": { vaultBaseUrl: "https://" },
};
const template = (destination: SecretSyncDestination) => JSON.stringify(TEMPLATES[destination], null, 2);

/** What a sync may do with destination secrets it did not write, in plain words (the server's default first). */
const UNOWNED = [
  { value: "keep", label: "Leave them alone" },
  { value: "overwrite", label: "Take over those the folder also has" },
  { value: "delete", label: "Take over, and delete those the folder lacks (mirror)" },
];

type Draft = {
  name: string;
  destination: SecretSyncDestination;
  connectionId: string;
  environment: string;
  secretPath: string;
  isAutoSyncEnabled: boolean;
  unownedSecrets: string;
  config: string;
};

/**
 * The body for the destination's create route, checked against that destination's own schema; a
 * settings error names the field inside them ("region: Invalid AWS region").
 */
const checked = (projectId: string, draft: Draft): { body: unknown; errors: FieldErrors } => {
  let destinationConfig: unknown;
  try {
    destinationConfig = JSON.parse(draft.config);
  } catch {
    return { body: null, errors: { destinationConfig: "Destination settings must be JSON" } };
  }
  const body = {
    name: draft.name,
    projectId,
    connectionId: draft.connectionId,
    environment: draft.environment,
    secretPath: draft.secretPath,
    isAutoSyncEnabled: draft.isAutoSyncEnabled,
    syncOptions: { unownedSecrets: draft.unownedSecrets },
    destinationConfig,
  };
  const result = syncContractOf(draft.destination).create.body.safeParse(body);
  if (result.success) return { body, errors: {} };
  const errors: FieldErrors = {};
  for (const issue of result.error.issues) {
    const field = String(issue.path[0] ?? "form");
    const inner = issue.path.slice(1).join(".");
    errors[field] ??= field === "destinationConfig" && inner ? `${inner}: ${issue.message}` : issue.message;
  }
  return { body: null, errors };
};

/**
 * A new sync: a folder, a destination reached through one of the organization's app connections, and
 * that destination's settings. "Preview" asks the server what the first run would create, update,
 * delete and leave alone, changing nothing; "Create sync" saves it (with auto-sync on, its first run is
 * queued at once).
 */
export const NewSyncDialog = ({
  project,
  onCreated,
  onClose,
}: {
  project: Project;
  onCreated: (sync: SecretSync) => void;
  onClose: () => void;
}) => {
  const client = useClient();
  const queryClient = useQueryClient();
  const environments = [...project.environments].sort((a, b) => a.position - b.position);
  const [draft, setDraft] = useState<Draft>({
    name: "",
    destination: "aws-secrets-manager",
    connectionId: "",
    environment: environments[0]?.slug ?? "",
    secretPath: "/",
    isAutoSyncEnabled: true,
    unownedSecrets: "keep",
    config: template("aws-secrets-manager"),
  });
  const [errors, setErrors] = useState<FieldErrors>({});
  const set = <K extends keyof Draft>(field: K, value: Draft[K]) => setDraft((d) => ({ ...d, [field]: value }));
  const connections = useQuery({
    queryKey: ["app-connections"],
    queryFn: () => ok(client.appConnections.listAll({ query: {} })),
  });
  const app = SECRET_SYNC_DESTINATIONS[draft.destination].connection;
  const usable = (connections.data?.appConnections ?? []).filter((c) => c.app === app);
  const connectionId = usable.some((c) => c.id === draft.connectionId) ? draft.connectionId : (usable[0]?.id ?? "");
  const actions = syncActions(client, draft.destination);
  // The first run's plan, and whether another sync of the organization already writes to that place.
  const preview = useMutation({
    mutationFn: async (body: unknown) => {
      const { projectId, connectionId, destinationConfig } = body as {
        projectId: string;
        connectionId: string;
        destinationConfig: unknown;
      };
      const [plan, duplicate] = await Promise.all([
        actions.planNew(body),
        actions.hasDuplicate({ projectId, connectionId, destinationConfig }),
      ]);
      return { plan, duplicate };
    },
  });
  const create = useMutation({
    mutationFn: (body: unknown) => actions.create(body),
    onSuccess: async (sync) => {
      onCreated(sync);
      await queryClient.invalidateQueries({ queryKey: ["secret-syncs", project.id] });
      onClose();
    },
  });
  /** The body checked against the destination's schema; the field errors shown when it is not. */
  const body = () => {
    const { body: checkedBody, errors: found } = checked(project.id, { ...draft, connectionId });
    setErrors(found);
    preview.reset();
    return checkedBody;
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const ready = body();
    if (ready) create.mutate(ready);
  };
  return (
    <Dialog title="New sync" onClose={onClose}>
      <form className="stack" onSubmit={submit} noValidate>
        <div className="row">
          <Field label="Name" value={draft.name} onChange={(e) => set("name", e.target.value)} error={errors.name} />
          <SelectField
            label="Destination"
            value={draft.destination}
            onChange={(value) => {
              const destination = value as SecretSyncDestination;
              setDraft((d) => ({ ...d, destination, config: template(destination) }));
            }}
            options={Object.entries(SECRET_SYNC_DESTINATIONS).map(([value, d]) => ({ value, label: d.name }))}
          />
        </div>
        {connections.isPending ? <Loading what="app connections" /> : null}
        <ErrorBanner error={connections.error} />
        {connections.data && usable.length === 0 ? (
          <p className="field-error small" role="alert">
            No {app} app connection in this organization: add one under App connections first.
          </p>
        ) : null}
        {usable.length > 0 ? (
          <SelectField
            label="App connection"
            value={connectionId}
            onChange={(value) => set("connectionId", value)}
            options={usable.map((c) => ({ value: c.id, label: c.name }))}
          />
        ) : null}
        <div className="row">
          <SelectField
            label="Environment"
            value={draft.environment}
            onChange={(value) => set("environment", value)}
            options={environments.map((env) => ({ value: env.slug, label: env.name }))}
          />
          <Field
            label="Folder path"
            value={draft.secretPath}
            onChange={(e) => set("secretPath", e.target.value)}
            error={errors.secretPath}
          />
        </div>
        <SelectField
          label="Destination secrets this sync did not write"
          value={draft.unownedSecrets}
          onChange={(value) => set("unownedSecrets", value)}
          options={UNOWNED}
        />
        <label className="check">
          <input
            type="checkbox"
            checked={draft.isAutoSyncEnabled}
            onChange={(e) => set("isAutoSyncEnabled", e.target.checked)}
          />{" "}
          Keep the destination current as the folder changes (auto-sync)
        </label>
        <div className="field">
          <label htmlFor="sync-destination-config">Destination settings (JSON)</label>
          <textarea
            id="sync-destination-config"
            rows={5}
            spellCheck={false}
            value={draft.config}
            onChange={(e) => set("config", e.target.value)}
            aria-invalid={errors.destinationConfig ? true : undefined}
            aria-describedby="sync-destination-config-hint"
          />
          <small className={errors.destinationConfig ? "field-error" : "hint"} id="sync-destination-config-hint">
            {errors.destinationConfig ?? "Checked against the destination's own rules before anything is sent."}
          </small>
        </div>
        {errors.connectionId ? <p className="field-error small">App connection: {errors.connectionId}</p> : null}
        <ErrorBanner error={preview.error ?? create.error} />
        {preview.data ? (
          <section aria-label="First run" className="stack">
            <p className="muted small">What the first run would do. Nothing has been changed.</p>
            {preview.data.duplicate ? (
              <div className="banner banner-warning" role="status">
                Another sync of this organization already writes to this place. Each keeps only the names it wrote, but
                two syncs of one place compete for the same names.
              </div>
            ) : null}
            <PlanView plan={preview.data.plan} />
          </section>
        ) : null}
        <div className="form-actions">
          <Button
            variant="secondary"
            disabled={preview.isPending}
            onClick={() => {
              const ready = body();
              if (ready) preview.mutate(ready);
            }}
          >
            Preview first run
          </Button>
          <Button type="submit" disabled={create.isPending || usable.length === 0}>
            Create sync
          </Button>
        </div>
      </form>
    </Dialog>
  );
};
