import { useQueries, useQuery } from "@tanstack/react-query";
import { ok } from "@keyward/client";
import { useClient } from "../session";
import { Badge, Empty, ErrorBanner, Loading, TableHead } from "../ui/components";
import { GrantForm } from "./grant-form";
import { GrantTimeline, type Grant } from "./timeline";
import type { Project } from "./types";

/** Roles of the project, its identities with their roles and privileges, and a timeline of temporary grants. */
export const Access = ({ project }: { project: Project }) => {
  const client = useClient();
  const projectId = project.id;
  const roles = useQuery({
    queryKey: ["roles", projectId],
    queryFn: () => ok(client.roles.list({ params: { projectId } })),
  });
  const memberships = useQuery({
    queryKey: ["memberships", projectId],
    queryFn: () => ok(client.projects.listIdentityMemberships({ params: { projectId }, query: { limit: 1000 } })),
  });
  const members = memberships.data?.identityMemberships ?? [];
  const privileges = useQueries({
    queries: members.map((m) => ({
      queryKey: ["privileges", projectId, m.identityId],
      queryFn: () => ok(client.privileges.v2.list({ query: { identityId: m.identityId, projectId } })),
    })),
  });
  const grants: Grant[] = [];
  members.forEach((m, i) => {
    for (const role of m.roles) {
      if (role.isTemporary && role.temporaryAccessStartTime && role.temporaryAccessEndTime) {
        grants.push({
          id: role.id,
          who: m.identity.name,
          what: `role ${role.customRoleSlug ?? role.role}`,
          start: role.temporaryAccessStartTime,
          end: role.temporaryAccessEndTime,
        });
      }
    }
    for (const p of privileges[i]?.data?.privileges ?? []) {
      if (p.isTemporary && p.temporaryAccessStartTime && p.temporaryAccessEndTime) {
        grants.push({
          id: p.id,
          who: m.identity.name,
          what: `privilege ${p.slug}`,
          start: p.temporaryAccessStartTime,
          end: p.temporaryAccessEndTime,
        });
      }
    }
  });
  return (
    <div className="stack">
      <section className="card" aria-labelledby="timeline-title">
        <h2 id="timeline-title">Temporary access</h2>
        <GrantTimeline grants={grants} />
      </section>
      <section className="card" aria-labelledby="members-title">
        <h2 id="members-title">Identities in this project</h2>
        <ErrorBanner error={memberships.error} />
        {memberships.isPending ? <Loading what="members" /> : null}
        {memberships.data && members.length === 0 ? <Empty>No identity is a member yet.</Empty> : null}
        <ul className="members">
          {members.map((m, i) => (
            <li key={m.id}>
              <strong>{m.identity.name}</strong>{" "}
              {m.roles.map((r) => (
                <Badge key={r.id} tone={r.isTemporary ? "warn" : "neutral"}>
                  {r.customRoleSlug ?? r.role}
                  {r.isTemporary ? " (temporary)" : ""}
                </Badge>
              ))}
              <ul className="chips">
                {(privileges[i]?.data?.privileges ?? []).map((p) => (
                  <li key={p.id}>
                    <code>{p.slug}</code>{" "}
                    {p.isTemporary ? <Badge tone="warn">temporary</Badge> : <Badge>permanent</Badge>}
                  </li>
                ))}
              </ul>
            </li>
          ))}
        </ul>
      </section>
      {members.length > 0 ? <GrantForm projectId={projectId} members={members} /> : null}
      <section className="card" aria-labelledby="roles-title">
        <h2 id="roles-title">Roles</h2>
        <ErrorBanner error={roles.error} />
        {roles.isPending ? <Loading what="roles" /> : null}
        <table className="table">
          <TableHead columns={["Name", "Slug", "Rules"]} />
          <tbody>
            {roles.data?.roles.map((role) => (
              <tr key={role.id}>
                <td>{role.name}</td>
                <td>
                  <code>{role.slug}</code>
                </td>
                <td>
                  <details>
                    <summary>{role.permissions.length} rules</summary>
                    {role.permissions.map((rule, n) => (
                      <div key={n} className="small">
                        {rule.inverted ? "cannot " : ""}
                        {rule.action.join(", ")} <code>{rule.subject}</code>
                      </div>
                    ))}
                  </details>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </section>
    </div>
  );
};
