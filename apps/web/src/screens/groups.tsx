import { useQuery } from "@tanstack/react-query";
import { ok } from "@keyward/client";
import { useClient } from "../session";
import { Badge, Empty, ErrorBanner, Loading, PageHeader, formatDate } from "../ui/components";

/** The organization's groups and project templates (read-only here). */
export const Groups = () => {
  const client = useClient();
  const groups = useQuery({ queryKey: ["groups"], queryFn: () => ok(client.groups.list()) });
  const templates = useQuery({
    queryKey: ["project-templates"],
    queryFn: () => ok(client.projectTemplates.list({ query: {} })),
  });
  return (
    <section className="stack">
      <PageHeader title="Groups & templates" />
      <section className="card" aria-labelledby="groups-title">
        <h2 id="groups-title">Groups</h2>
        <ErrorBanner error={groups.error} />
        {groups.isPending ? <Loading what="groups" /> : null}
        {groups.data && groups.data.length === 0 ? <Empty>No groups.</Empty> : null}
        <ul className="rows">
          {groups.data?.map((g) => (
            <li key={g.id}>
              <strong>{g.name}</strong> <code>{g.slug}</code> <Badge>{g.role}</Badge>{" "}
              <span className="muted small">{formatDate(g.createdAt)}</span>
            </li>
          ))}
        </ul>
      </section>
      <section className="card" aria-labelledby="templates-title">
        <h2 id="templates-title">Project templates</h2>
        <ErrorBanner error={templates.error} />
        {templates.isPending ? <Loading what="templates" /> : null}
        <ul className="rows">
          {templates.data?.projectTemplates.map((t) => (
            <li key={t.id}>
              <strong>{t.name}</strong> <Badge>{t.type}</Badge>
              {t.description ? <span className="muted small"> {t.description}</span> : null}
              <div className="small">
                Roles: {t.roles.map((r) => r.slug).join(", ") || "none"} · Environments:{" "}
                {t.environments?.map((e) => e.slug).join(", ") ?? "default"}
              </div>
            </li>
          ))}
        </ul>
      </section>
    </section>
  );
};
