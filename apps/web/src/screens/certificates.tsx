import { useQuery } from "@tanstack/react-query";
import { ok } from "@keyward/client";
import { useClient } from "../session";
import { setSearch, useLocation } from "../router";
import { Badge, Empty, ErrorBanner, Loading, PageHeader, SelectField, TableHead } from "../ui/components";
import { StackedBars } from "../ui/bar-chart";

const SERIES = [
  { key: "activeCertificates", label: "Active", color: "#2f8f5b" },
  { key: "expiringCertificates", label: "Expiring soon", color: "#d49a1a" },
  { key: "expiredCertificates", label: "Expired", color: "#8a8f98" },
  { key: "revokedCertificates", label: "Revoked", color: "#c2413b" },
];

/** Certificate profiles of a certificate project, with their certificate counts as a chart. */
export const Certificates = () => {
  const client = useClient();
  const { search } = useLocation();
  const projects = useQuery({
    queryKey: ["projects", "cert-manager"],
    queryFn: () => ok(client.projects.list({ query: { type: "cert-manager" } })),
  });
  const list = projects.data?.projects ?? [];
  const projectId = search.get("project") ?? list[0]?.id ?? "";
  const profiles = useQuery({
    queryKey: ["certificate-profiles", projectId],
    enabled: projectId !== "",
    queryFn: () => ok(client.certificateProfiles.list({ query: { projectId, limit: 100 } })),
  });
  const rows = (profiles.data?.certificateProfiles ?? []).map((p) => ({
    label: p.slug,
    values: {
      activeCertificates: p.metrics?.activeCertificates ?? 0,
      expiringCertificates: p.metrics?.expiringCertificates ?? 0,
      expiredCertificates: p.metrics?.expiredCertificates ?? 0,
      revokedCertificates: p.metrics?.revokedCertificates ?? 0,
    },
  }));
  return (
    <section className="stack">
      <PageHeader title="Certificate profiles" />
      <ErrorBanner error={projects.error ?? profiles.error} />
      {projects.isPending ? <Loading what="projects" /> : null}
      {projects.data && list.length === 0 ? <Empty>No certificate-manager project.</Empty> : null}
      {list.length > 0 ? (
        <SelectField
          label="Project"
          value={projectId}
          onChange={(project) => setSearch({ project })}
          options={list.map((p) => ({ value: p.id, label: p.name }))}
        />
      ) : null}
      {profiles.data && rows.length === 0 ? <Empty>No certificate profiles in this project.</Empty> : null}
      {rows.length > 0 ? <StackedBars title="Certificates per profile" series={SERIES} rows={rows} /> : null}
      {(profiles.data?.certificateProfiles ?? []).length > 0 ? (
        // Nothing in it takes focus: the table itself does, so a keyboard scrolls it when it is wider than a phone.
        <table className="table" aria-label="Certificate profiles" tabIndex={0}>
          <TableHead columns={["Profile", "Enrollment", "CA", "Total", "Expiring"]} />
          <tbody>
            {profiles.data?.certificateProfiles.map((p) => (
              <tr key={p.id}>
                <th scope="row">{p.slug}</th>
                <td>
                  <Badge>{p.enrollmentType}</Badge>
                </td>
                <td>{p.certificateAuthority?.name ?? "—"}</td>
                <td>{p.metrics?.totalCertificates ?? 0}</td>
                <td>
                  {p.metrics?.expiringCertificates ? <Badge tone="warn">{p.metrics.expiringCertificates}</Badge> : 0}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </section>
  );
};
