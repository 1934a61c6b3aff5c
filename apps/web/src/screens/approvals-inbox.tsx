import { useQueries, useQuery } from "@tanstack/react-query";
import type { AccessRequest, ChangeRequestDetail } from "@keyward/contract";
import { ok } from "@keyward/client";
import { useClient } from "../session";
import { Link } from "../router";
import { Empty, ErrorBanner, Loading, PageHeader, TableHead, formatDateTime } from "../ui/components";
import { RequestRow } from "./access-requests";
import { Approvals, RequestCells, waitingForMyReview } from "./change-requests";

/** How many projects the inbox asks (two small reads each); past it the note says so. */
const MAX_PROJECTS = 100;

type ProjectRef = { id: string; name: string; slug: string };

const projectLink = (project: ProjectRef, tab: string) => (
  <Link href={`/projects/${encodeURIComponent(project.id)}/${tab}`}>{project.name}</Link>
);

const ChangeRequestRows = ({ project, requests }: { project: ProjectRef; requests: ChangeRequestDetail[] }) =>
  requests.map((r) => (
    <tr key={r.id}>
      <td>{projectLink(project, "change-requests")}</td>
      <RequestCells request={r} projectId={project.id} />
      <td>
        <Approvals request={r} />
      </td>
      <td className="small">{formatDateTime(r.createdAt)}</td>
    </tr>
  ));

/**
 * What waits for the signed-in person's or identity's review, in every secrets project they belong to:
 * open change requests and pending access requests whose policy names them as an approver (or, for
 * change requests, a bypasser). A change request opens on its diff; an access request is approved or
 * rejected in place. The server decides who may do what; a refusal shows its message.
 */
export const ApprovalsInbox = () => {
  const client = useClient();
  const projects = useQuery({ queryKey: ["projects"], queryFn: () => ok(client.projects.list({ query: {} })) });
  const all = (projects.data?.projects ?? []).filter((p) => p.type === "secret-manager");
  const asked = all.slice(0, MAX_PROJECTS);
  const changes = useQueries({ queries: asked.map((p) => waitingForMyReview(client, p.id)) });
  const access = useQueries({
    queries: asked.map((p) => ({
      queryKey: ["access-requests", p.id, "reviewable"],
      queryFn: () => ok(client.accessApprovalRequests.list({ query: { projectSlug: p.slug, reviewable: "true" } })),
    })),
  });
  const changeRows = asked.map((project, i) => ({ project, requests: changes[i]?.data?.approvals ?? [] }));
  const accessRows = asked.flatMap((project, i) =>
    (access[i]?.data?.requests ?? [])
      .filter((r: AccessRequest) => r.status === "pending")
      .map((request) => ({ project, request })),
  );
  const changeCount = changeRows.reduce((sum, row) => sum + row.requests.length, 0);
  const loading = projects.isPending || [...changes, ...access].some((q) => q.isPending);
  const error = projects.error ?? [...changes, ...access].find((q) => q.error)?.error;
  return (
    <section className="stack">
      <PageHeader title="Approvals" />
      <p className="muted small">
        Change requests and access requests that wait for your review, in every project you belong to.
        {all.length > MAX_PROJECTS ? ` Only the first ${MAX_PROJECTS} of your ${all.length} projects are shown.` : ""}
      </p>
      <ErrorBanner error={error} />
      {loading ? <Loading what="approvals" /> : null}
      <section className="card" aria-labelledby="inbox-changes">
        <h2 id="inbox-changes">Change requests</h2>
        {!loading && changeCount === 0 ? <Empty>No change request waits for your review.</Empty> : null}
        {changeCount > 0 ? (
          <table className="table" aria-label="Change requests waiting for my review">
            <TableHead columns={["Project", "Changes", "Folder", "Approvals", "Opened"]} />
            <tbody>
              {changeRows.map(({ project, requests }) => (
                <ChangeRequestRows key={project.id} project={project} requests={requests} />
              ))}
            </tbody>
          </table>
        ) : null}
      </section>
      <section className="card" aria-labelledby="inbox-access">
        <h2 id="inbox-access">Access requests</h2>
        {!loading && accessRows.length === 0 ? <Empty>No access request waits for your review.</Empty> : null}
        {accessRows.length > 0 ? (
          <table className="table" aria-label="Access requests waiting for my review">
            <TableHead columns={["Project", "Requested by", "Access to", "Status", "Asked"]} actions />
            <tbody>
              {accessRows.map(({ project, request }) => (
                <RequestRow
                  key={request.id}
                  request={request}
                  projectId={project.id}
                  project={projectLink(project, "access-requests")}
                />
              ))}
            </tbody>
          </table>
        ) : null}
      </section>
    </section>
  );
};
