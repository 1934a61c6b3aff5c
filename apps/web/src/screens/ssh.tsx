import type { ReactNode } from "react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { ok } from "@keyward/client";
import { useClient } from "../session";
import { Badge, Button, Empty, ErrorBanner, Loading, TableHead, formatDateTime } from "../ui/components";
import type { Project } from "./types";

const PAGE = 100;

/**
 * One titled list as a table named by its title: "loading", the server's refusal, or a line saying it
 * is empty in its place; `rows` is undefined until the list has come.
 */
const ListSection = <T,>(props: {
  title: string;
  what: string;
  empty: string;
  columns: readonly string[];
  actions?: boolean;
  rows: T[] | undefined;
  pending: boolean;
  error: unknown;
  row: (item: T) => ReactNode;
  children?: ReactNode;
}) => (
  <section className="stack">
    <h2>{props.title}</h2>
    <ErrorBanner error={props.error} />
    {props.pending ? <Loading what={props.what} /> : null}
    {props.rows && props.rows.length === 0 ? <Empty>{props.empty}</Empty> : null}
    {props.rows && props.rows.length > 0 ? (
      <table className="table" aria-label={props.title}>
        <TableHead columns={props.columns} actions={props.actions} />
        <tbody>{props.rows.map(props.row)}</tbody>
      </table>
    ) : null}
    {props.children}
  </section>
);

/** A project's certificate authorities, with links to the public key and revocation list hosts fetch. */
const Authorities = ({ projectId }: { projectId: string }) => {
  const client = useClient();
  const cas = useQuery({
    queryKey: ["ssh-cas", projectId],
    queryFn: () => ok(client.ssh.projectCas({ params: { projectId } })),
  });
  return (
    <ListSection
      title="Certificate authorities"
      what="certificate authorities"
      empty="No certificate authorities."
      columns={["Name", "Algorithm", "Status", "For hosts"]}
      rows={cas.data?.cas}
      pending={cas.isPending}
      error={cas.error}
      row={(ca) => (
        <tr key={ca.id}>
          <th scope="row">{ca.friendlyName}</th>
          <td>{ca.keyAlgorithm}</td>
          <td>
            <Badge tone={ca.status === "active" ? "ok" : "bad"}>{ca.status}</Badge>
          </td>
          <td className="small">
            <a href={`/api/v1/ssh/ca/${ca.id}/public-key`}>Public key</a> ·{" "}
            <a href={`/api/v1/ssh/ca/${ca.id}/krl`}>Revocation list</a>
          </td>
        </tr>
      )}
    />
  );
};

/** Certificate templates: what each lets its CA sign, and for how long. */
const Templates = ({ projectId }: { projectId: string }) => {
  const client = useClient();
  const templates = useQuery({
    queryKey: ["ssh-templates", projectId],
    queryFn: () => ok(client.ssh.projectTemplates({ params: { projectId } })),
  });
  const kinds = (t: { allowUserCertificates: boolean; allowHostCertificates: boolean }) =>
    [t.allowUserCertificates ? "user" : "", t.allowHostCertificates ? "host" : ""].filter(Boolean).join(", ");
  return (
    <ListSection
      title="Certificate templates"
      what="certificate templates"
      empty="No certificate templates."
      columns={["Name", "Certificates", "Users", "Hosts", "TTL (max)", "Status"]}
      rows={templates.data?.certificateTemplates}
      pending={templates.isPending}
      error={templates.error}
      row={(t) => (
        <tr key={t.id}>
          <th scope="row">{t.name}</th>
          <td>{kinds(t) || <span className="muted">none</span>}</td>
          <td>{t.allowedUsers.join(", ") || <span className="muted">—</span>}</td>
          <td>{t.allowedHosts.join(", ") || <span className="muted">—</span>}</td>
          <td>
            {t.ttl} ({t.maxTTL})
          </td>
          <td>
            <Badge tone={t.status === "active" ? "ok" : "bad"}>{t.status}</Badge>
          </td>
        </tr>
      )}
    />
  );
};

/** The project's hosts with who may log in as whom (a host's own mappings and its groups'). */
const Hosts = ({ projectId }: { projectId: string }) => {
  const client = useClient();
  const hosts = useQuery({
    queryKey: ["ssh-hosts", projectId],
    queryFn: () => ok(client.ssh.projectHosts({ params: { projectId } })),
  });
  return (
    <ListSection
      title="Hosts"
      what="hosts"
      empty="No hosts. Register one with keyward ssh add-host."
      columns={["Hostname", "Alias", "Logins", "User certificates last"]}
      rows={hosts.data?.hosts}
      pending={hosts.isPending}
      error={hosts.error}
      row={(host) => (
        <tr key={host.id}>
          <th scope="row">{host.hostname}</th>
          <td>{host.alias || <span className="muted">—</span>}</td>
          <td className="small">
            {host.loginMappings.length === 0 ? <span className="muted">nobody</span> : null}
            {host.loginMappings.map((m, index) => (
              <div key={`${m.loginUser}-${index}`}>
                <strong>{m.loginUser}</strong>:{" "}
                {[...m.allowedPrincipals.usernames, ...m.allowedPrincipals.groups.map((g) => `group ${g}`)].join(", ")}
                {m.source === "hostGroup" ? <span className="muted"> (host group)</span> : null}
              </div>
            ))}
          </td>
          <td>{host.userCertTtl}</td>
        </tr>
      )}
    />
  );
};

/** Signed certificates, newest first, each revocable while it is active. */
const Certificates = ({ projectId }: { projectId: string }) => {
  const client = useClient();
  const queryClient = useQueryClient();
  const certificates = useQuery({
    queryKey: ["ssh-certificates", projectId],
    queryFn: () => ok(client.ssh.projectCertificates({ params: { projectId }, query: { limit: PAGE } })),
  });
  const revoke = useMutation({
    mutationFn: (certificateId: string) => ok(client.ssh.revoke({ params: { certificateId }, body: {} })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ["ssh-certificates", projectId] }),
  });
  const data = certificates.data;
  return (
    <ListSection
      title="Signed certificates"
      what="certificates"
      empty="No certificates signed yet."
      columns={["Serial", "Type", "Principals", "Valid until", "Status"]}
      actions
      rows={data?.certificates}
      pending={certificates.isPending}
      error={certificates.error ?? revoke.error}
      row={(cert) => (
        <tr key={cert.id}>
          <th scope="row" className="mono">
            {cert.serialNumber}
          </th>
          <td>{cert.certType}</td>
          <td>{cert.principals.join(", ")}</td>
          <td>{formatDateTime(cert.notAfter)}</td>
          <td>
            <Badge tone={cert.status === "active" ? "ok" : "bad"}>{cert.status}</Badge>
          </td>
          <td>
            {cert.status === "active" ? (
              <Button
                variant="secondary"
                disabled={revoke.isPending}
                aria-label={`Revoke certificate ${cert.serialNumber}`}
                onClick={() => revoke.mutate(cert.id)}
              >
                Revoke
              </Button>
            ) : null}
          </td>
        </tr>
      )}
    >
      {data && data.totalCount > data.certificates.length ? (
        <p className="muted small">
          The newest {data.certificates.length} of {data.totalCount} certificates.
        </p>
      ) : null}
    </ListSection>
  );
};

/** An SSH project: its CAs, templates, hosts and signed certificates; a revoked serial joins its CA's revocation list. */
export const Ssh = ({ project }: { project: Project }) => (
  <div className="stack">
    <Authorities projectId={project.id} />
    <Templates projectId={project.id} />
    <Hosts projectId={project.id} />
    <Certificates projectId={project.id} />
  </div>
);
