import { useState, type FormEvent } from "react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { contract } from "@keyward/contract";
import { ok } from "@keyward/client";
import { useClient } from "../session";
import { setSearch, useLocation } from "../router";
import {
  Badge,
  Button,
  Empty,
  ErrorBanner,
  Field,
  Loading,
  SelectField,
  formatDate,
  formatDuration,
  TableHead,
} from "../ui/components";
import { validate, type FieldErrors } from "../ui/form";
import { useNow } from "../ui/now";
import type { Project } from "./types";

type LeaseScope = { projectSlug: string; environmentSlug: string; path: string };

const leaseTone = (status: string | null, left: number) =>
  status && status !== "active" ? "bad" : left <= 0 ? "bad" : left < 5 * 60_000 ? "warn" : "ok";

const Leases = ({ scope, name }: { scope: LeaseScope; name: string }) => {
  const client = useClient();
  const queryClient = useQueryClient();
  const now = useNow();
  const [ttl, setTtl] = useState("");
  const [errors, setErrors] = useState<FieldErrors>({});
  const [issued, setIssued] = useState<Record<string, string> | null>(null);
  const key = ["leases", scope, name];
  const leases = useQuery({
    queryKey: key,
    // Leases end on their own: the list follows revocations without a reload.
    refetchInterval: 5_000,
    queryFn: () => ok(client.dynamicSecrets.listLeases({ params: { name }, query: scope })),
  });
  const create = useMutation({
    mutationFn: (body: typeof contract.dynamicSecretLeases.create.body._output) =>
      ok(client.dynamicSecretLeases.create({ body })),
    onSuccess: async (result) => {
      setIssued(result.data);
      await queryClient.invalidateQueries({ queryKey: key });
    },
  });
  const revoke = useMutation({
    mutationFn: (leaseId: string) =>
      ok(client.dynamicSecretLeases.delete({ params: { leaseId }, body: { ...scope, isForced: false } })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: key }),
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const checked = validate(contract.dynamicSecretLeases.create.body, {
      ...scope,
      dynamicSecretName: name,
      ttl: ttl || undefined,
    });
    setErrors(checked.errors ?? {});
    if (checked.data) create.mutate(checked.data);
  };
  const list = leases.data?.leases ?? [];
  return (
    <section className="card" aria-labelledby="leases-title">
      <h2 id="leases-title">Leases of {name}</h2>
      <form className="inline-form" onSubmit={submit} noValidate>
        <Field
          label="TTL (optional, e.g. 15m)"
          value={ttl}
          onChange={(e) => setTtl(e.target.value)}
          error={errors.ttl}
        />
        <Button type="submit" disabled={create.isPending}>
          Create lease
        </Button>
      </form>
      <ErrorBanner error={create.error ?? revoke.error ?? leases.error} />
      {issued ? (
        <div className="banner banner-info" role="status">
          New credentials (shown once):{" "}
          {Object.entries(issued).map(([k, v]) => (
            <span key={k}>
              {k}: <code>{v}</code>{" "}
            </span>
          ))}
        </div>
      ) : null}
      {leases.isPending ? <Loading what="leases" /> : null}
      {leases.data && list.length === 0 ? <Empty>No live leases.</Empty> : null}
      {list.length > 0 ? (
        <table className="table" aria-label="Leases">
          <TableHead columns={["Lease", "Status", "Time left", "Expires"]} actions />
          <tbody>
            {list.map((lease) => {
              const left = Date.parse(lease.expireAt) - now;
              return (
                <tr key={lease.id} data-testid="lease-row">
                  <td>
                    <code>{lease.externalEntityId}</code>
                  </td>
                  <td>
                    <Badge tone={leaseTone(lease.status, left)}>{lease.status ?? "active"}</Badge>
                    {lease.statusDetails ? <div className="muted small">{lease.statusDetails}</div> : null}
                  </td>
                  <td data-testid="time-left">{left > 0 ? formatDuration(left) : "expired"}</td>
                  <td>{formatDate(lease.expireAt)}</td>
                  <td className="actions">
                    <Button variant="danger" disabled={revoke.isPending} onClick={() => revoke.mutate(lease.id)}>
                      Revoke
                    </Button>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      ) : null}
    </section>
  );
};

export const DynamicSecrets = ({ project }: { project: Project }) => {
  const client = useClient();
  const { search } = useLocation();
  const environments = [...project.environments].sort((a, b) => a.position - b.position);
  const environmentSlug = search.get("env") ?? environments[0]?.slug ?? "";
  const scope: LeaseScope = { projectSlug: project.slug, environmentSlug, path: search.get("path") ?? "/" };
  const selected = search.get("secret");
  const secrets = useQuery({
    queryKey: ["dynamic-secrets", scope],
    enabled: environmentSlug !== "",
    queryFn: () => ok(client.dynamicSecrets.list({ query: scope })),
  });
  const list = secrets.data?.dynamicSecrets ?? [];
  return (
    <div className="stack">
      <div className="toolbar">
        <SelectField
          label="Environment"
          value={environmentSlug}
          onChange={(env) => setSearch({ env, secret: undefined })}
          options={environments.map((env) => ({ value: env.slug, label: env.name }))}
        />
        <p className="muted small">Folder {scope.path}</p>
      </div>
      <ErrorBanner error={secrets.error} />
      {secrets.isPending && environmentSlug ? <Loading what="dynamic secrets" /> : null}
      {secrets.data && list.length === 0 ? <Empty>No dynamic secrets in this folder.</Empty> : null}
      <ul className="grid">
        {list.map((ds) => (
          <li key={ds.id} className={`card${selected === ds.name ? " selected" : ""}`}>
            <h2>
              <button type="button" className="linklike" onClick={() => setSearch({ secret: ds.name })}>
                {ds.name}
              </button>
            </h2>
            <p className="small">
              <Badge>{ds.type}</Badge> default TTL {ds.defaultTTL}
              {ds.maxTTL ? `, max ${ds.maxTTL}` : ""}
            </p>
            {ds.status ? <Badge tone="bad">{ds.status}</Badge> : null}
          </li>
        ))}
      </ul>
      {selected ? <Leases scope={scope} name={selected} /> : null}
    </div>
  );
};
