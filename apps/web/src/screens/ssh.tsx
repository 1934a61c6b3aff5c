import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { ok } from "@keyward/client";
import { useClient } from "../session";
import { Badge, Button, Empty, ErrorBanner, Loading, TableHead, formatDateTime } from "../ui/components";
import type { Project } from "./types";

const PAGE = 100;

/** A project's certificate authorities, with links to the public key and revocation list hosts fetch. */
const Authorities = ({ projectId }: { projectId: string }) => {
  const client = useClient();
  const cas = useQuery({
    queryKey: ["ssh-cas", projectId],
    queryFn: () => ok(client.ssh.projectCas({ params: { projectId } })),
  });
  const list = cas.data?.cas ?? [];
  return (
    <section className="stack">
      <h2>Certificate authorities</h2>
      <ErrorBanner error={cas.error} />
      {cas.isPending ? <Loading what="certificate authorities" /> : null}
      {cas.data && list.length === 0 ? <Empty>No certificate authorities.</Empty> : null}
      {list.length > 0 ? (
        <table className="table" aria-label="Certificate authorities">
          <TableHead columns={["Name", "Algorithm", "Status", "For hosts"]} />
          <tbody>
            {list.map((ca) => (
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
            ))}
          </tbody>
        </table>
      ) : null}
    </section>
  );
};

/** Certificate templates: what each lets its CA sign, and for how long. */
const Templates = ({ projectId }: { projectId: string }) => {
  const client = useClient();
  const templates = useQuery({
    queryKey: ["ssh-templates", projectId],
    queryFn: () => ok(client.ssh.projectTemplates({ params: { projectId } })),
  });
  const list = templates.data?.certificateTemplates ?? [];
  const kinds = (t: (typeof list)[number]) =>
    [t.allowUserCertificates ? "user" : "", t.allowHostCertificates ? "host" : ""].filter(Boolean).join(", ");
  return (
    <section className="stack">
      <h2>Certificate templates</h2>
      <ErrorBanner error={templates.error} />
      {templates.isPending ? <Loading what="certificate templates" /> : null}
      {templates.data && list.length === 0 ? <Empty>No certificate templates.</Empty> : null}
      {list.length > 0 ? (
        <table className="table" aria-label="Certificate templates">
          <TableHead columns={["Name", "Certificates", "Users", "Hosts", "TTL (max)", "Status"]} />
          <tbody>
            {list.map((t) => (
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
            ))}
          </tbody>
        </table>
      ) : null}
    </section>
  );
};

/** The project's hosts with who may log in as whom (a host's own mappings and its groups'). */
const Hosts = ({ projectId }: { projectId: string }) => {
  const client = useClient();
  const hosts = useQuery({
    queryKey: ["ssh-hosts", projectId],
    queryFn: () => ok(client.ssh.projectHosts({ params: { projectId } })),
  });
  const list = hosts.data?.hosts ?? [];
  return (
    <section className="stack">
      <h2>Hosts</h2>
      <ErrorBanner error={hosts.error} />
      {hosts.isPending ? <Loading what="hosts" /> : null}
      {hosts.data && list.length === 0 ? <Empty>No hosts. Register one with keyward ssh add-host.</Empty> : null}
      {list.length > 0 ? (
        <table className="table" aria-label="Hosts">
          <TableHead columns={["Hostname", "Alias", "Logins", "User certificates last"]} />
          <tbody>
            {list.map((host) => (
              <tr key={host.id}>
                <th scope="row">{host.hostname}</th>
                <td>{host.alias || <span className="muted">—</span>}</td>
                <td className="small">
                  {host.loginMappings.length === 0 ? <span className="muted">nobody</span> : null}
                  {host.loginMappings.map((m, index) => (
                    <div key={`${m.loginUser}-${index}`}>
                      <strong>{m.loginUser}</strong>:{" "}
                      {[...m.allowedPrincipals.usernames, ...m.allowedPrincipals.groups.map((g) => `group ${g}`)].join(
                        ", ",
                      )}
                      {m.source === "hostGroup" ? <span className="muted"> (host group)</span> : null}
                    </div>
                  ))}
                </td>
                <td>{host.userCertTtl}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </section>
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
  const list = certificates.data?.certificates ?? [];
  return (
    <section className="stack">
      <h2>Signed certificates</h2>
      <ErrorBanner error={certificates.error ?? revoke.error} />
      {certificates.isPending ? <Loading what="certificates" /> : null}
      {certificates.data && list.length === 0 ? <Empty>No certificates signed yet.</Empty> : null}
      {list.length > 0 ? (
        <table className="table" aria-label="Signed certificates">
          <TableHead columns={["Serial", "Type", "Principals", "Valid until", "Status"]} actions />
          <tbody>
            {list.map((cert) => (
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
            ))}
          </tbody>
        </table>
      ) : null}
      {certificates.data && certificates.data.totalCount > list.length ? (
        <p className="muted small">
          The newest {list.length} of {certificates.data.totalCount} certificates.
        </p>
      ) : null}
    </section>
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
