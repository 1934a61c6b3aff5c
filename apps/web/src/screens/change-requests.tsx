import { useState, type FormEvent } from "react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { ChangeRequestDetail } from "@keyward/contract";
import { ok, type KeywardClient } from "@keyward/client";
import { useClient } from "../session";
import { Link, setSearch, useLocation } from "../router";
import {
  Badge,
  Button,
  Empty,
  ErrorBanner,
  Field,
  Loading,
  SelectField,
  TableHead,
  formatDate,
} from "../ui/components";
import { changeRequestHref } from "./change-request-notice";
import type { Project } from "./types";

type Names = Map<string, string>;

/** Names of the project's people and identities, for committers and reviewers; ids when not allowed to list them. */
const useNames = (projectId: string): Names => {
  const client = useClient();
  const identities = useQuery({
    queryKey: ["project-identities", projectId],
    retry: false,
    queryFn: () => ok(client.projects.listIdentityMemberships({ params: { projectId }, query: { limit: 1000 } })),
  });
  const people = useQuery({
    queryKey: ["project-people", projectId],
    retry: false,
    queryFn: () => ok(client.users.listProjectMemberships({ params: { projectId } })),
  });
  const names: Names = new Map();
  for (const m of identities.data?.identityMemberships ?? []) names.set(m.identity.id, m.identity.name);
  for (const m of people.data?.memberships ?? []) names.set(m.user.id, m.user.email);
  return names;
};

const nameOf = (names: Names, type: string, id: string | null) =>
  id ? (names.get(id) ?? `${type} ${id.slice(0, 8)}`) : "—";

const committer = (names: Names, r: ChangeRequestDetail) =>
  nameOf(names, r.committerType, r.committerUserId ?? r.committerIdentityId ?? r.committerId);

const StatusBadge = ({ request }: { request: ChangeRequestDetail }) =>
  request.hasMerged ? (
    <Badge tone="ok">merged</Badge>
  ) : request.status === "open" ? (
    <Badge tone="warn">open</Badge>
  ) : (
    <Badge tone="bad">closed</Badge>
  );

/** A request's first cells in a list: the keys it changes (linking to its diff) and its folder. */
export const RequestCells = ({ request, projectId }: { request: ChangeRequestDetail; projectId: string }) => (
  <>
    <th scope="row">
      <Link href={changeRequestHref(projectId, request.id)}>
        {request.commits.map((c) => c.newSecretName ?? c.secretKey).join(", ") || request.slug}
      </Link>
    </th>
    <td>
      <code>
        {request.environment} {request.secretPath}
      </code>
    </td>
  </>
);

export const Approvals = ({ request }: { request: ChangeRequestDetail }) => (
  <span data-testid="approvals">
    {request.approvalCount} of {request.policy.approvals} approvals
  </span>
);

const RequestTable = ({
  label,
  requests,
  projectId,
  names,
}: {
  label: string;
  requests: ChangeRequestDetail[];
  projectId: string;
  names: Names;
}) => (
  <table className="table" aria-label={label}>
    <TableHead columns={["Request", "Folder", "Committer", "Approvals", "Status", "Opened"]} />
    <tbody>
      {requests.map((r) => (
        <tr key={r.id}>
          <RequestCells request={r} projectId={projectId} />
          <td>{committer(names, r)}</td>
          <td>
            <Approvals request={r} />
          </td>
          <td>
            <StatusBadge request={r} />
          </td>
          <td className="muted small">{formatDate(r.createdAt)}</td>
        </tr>
      ))}
    </tbody>
  </table>
);

/** The project's open change requests whose policy names the caller (the project's tab and the inbox share it). */
export const waitingForMyReview = (client: KeywardClient, projectId: string) => ({
  queryKey: ["change-requests", projectId, "reviewable"],
  queryFn: () =>
    ok(
      client.secretApprovalRequests.list({
        query: { projectId, status: "open", reviewable: "true", limit: 100 },
      }),
    ),
});

const RequestList = ({ project }: { project: Project }) => {
  const client = useClient();
  const { search } = useLocation();
  const names = useNames(project.id);
  const status = search.get("status") === "close" ? "close" : "open";
  const waiting = useQuery(waitingForMyReview(client, project.id));
  const all = useQuery({
    queryKey: ["change-requests", project.id, status],
    queryFn: () => ok(client.secretApprovalRequests.list({ query: { projectId: project.id, status, limit: 100 } })),
  });
  const mine = waiting.data?.approvals ?? [];
  const list = all.data?.approvals ?? [];
  return (
    <div className="stack">
      <section className="card" aria-labelledby="waiting-title">
        <h2 id="waiting-title">Waiting for my review</h2>
        <ErrorBanner error={waiting.error} />
        {waiting.isPending ? <Loading what="change requests" /> : null}
        {waiting.data && mine.length === 0 ? <Empty>Nothing waits for your review.</Empty> : null}
        {mine.length > 0 ? (
          <RequestTable label="Waiting for my review" requests={mine} projectId={project.id} names={names} />
        ) : null}
      </section>
      <section className="card" aria-labelledby="all-title">
        <h2 id="all-title">All change requests</h2>
        <div className="toolbar">
          <SelectField
            label="Show"
            value={status}
            onChange={(value) => setSearch({ status: value === "open" ? undefined : value })}
            options={[
              { value: "open", label: "Open" },
              { value: "close", label: "Closed" },
            ]}
          />
          {all.data ? <p className="muted small">{all.data.totalCount} in all</p> : null}
        </div>
        <ErrorBanner error={all.error} />
        {all.isPending ? <Loading what="change requests" /> : null}
        {all.data && list.length === 0 ? (
          <Empty>{status === "open" ? "No open change requests." : "No closed change requests."}</Empty>
        ) : null}
        {list.length > 0 ? (
          <RequestTable label="All change requests" requests={list} projectId={project.id} names={names} />
        ) : null}
      </section>
    </div>
  );
};

const ValueCell = ({ commit }: { commit: ChangeRequestDetail["commits"][number] }) => {
  if (commit.op === "delete") return <span className="muted">deleted</span>;
  if (!commit.changesValue) return <span className="muted">comment/tags only</span>;
  if (commit.secretValueHidden) return <span className="muted">hidden</span>;
  return <code>{commit.secretValue}</code>;
};

const OP_TONE = { create: "ok", update: "warn", delete: "bad" } as const;

const RequestDetail = ({ project, requestId }: { project: Project; requestId: string }) => {
  const client = useClient();
  const queryClient = useQueryClient();
  const names = useNames(project.id);
  const [comment, setComment] = useState("");
  const [bypassReason, setBypassReason] = useState("");
  const detail = useQuery({
    queryKey: ["change-requests", project.id, "detail", requestId],
    queryFn: () => ok(client.secretApprovalRequests.get({ params: { requestId } })),
  });
  const refresh = async () => {
    await queryClient.invalidateQueries({ queryKey: ["change-requests", project.id] });
    await queryClient.invalidateQueries({ queryKey: ["secrets"] });
  };
  const review = useMutation({
    mutationFn: (status: "approved" | "rejected") =>
      ok(
        client.secretApprovalRequests.review({
          params: { requestId },
          body: { status, comment: comment.trim() || undefined },
        }),
      ),
    onSuccess: async () => {
      setComment("");
      await refresh();
    },
  });
  const merge = useMutation({
    mutationFn: () =>
      ok(
        client.secretApprovalRequests.merge({
          params: { requestId },
          body: { bypassReason: bypassReason.trim() || undefined },
        }),
      ),
    onSuccess: refresh,
  });
  const setStatus = useMutation({
    mutationFn: (status: "open" | "close") =>
      ok(client.secretApprovalRequests.status({ params: { requestId }, body: { status } })),
    onSuccess: refresh,
  });
  const busy = review.isPending || merge.isPending || setStatus.isPending;
  // Only the last action's error is shown: an earlier refusal is cleared by the next attempt.
  const act = (run: () => void) => {
    review.reset();
    merge.reset();
    setStatus.reset();
    run();
  };
  const lastError = [review, merge, setStatus].find((m) => m.error)?.error;
  const back = <Link href={`/projects/${encodeURIComponent(project.id)}/change-requests`}>All change requests</Link>;
  if (detail.error)
    return (
      <div className="stack">
        <p>{back}</p>
        <ErrorBanner error={detail.error} />
      </div>
    );
  if (!detail.data) return <Loading what="change request" />;
  const r = detail.data.approval;
  const open = r.status === "open" && !r.hasMerged;
  const submitReview = (event: FormEvent) => event.preventDefault();
  return (
    <div className="stack">
      <p className="small">{back}</p>
      <section className="card" aria-labelledby="request-title">
        <h2 id="request-title">
          Change request {r.slug} <StatusBadge request={r} />
        </h2>
        <p className="small">
          Folder <code>{r.environment}</code> <code>{r.secretPath}</code> · by {committer(names, r)} ·{" "}
          {formatDate(r.createdAt)} · <Approvals request={r} />
          {r.policy.enforcementLevel === "soft" ? " · soft policy" : ""}
        </p>
        {r.bypassReason ? <p className="small">Merged without approvals: {r.bypassReason}</p> : null}
        {r.conflicts.length > 0 ? (
          <div className="banner banner-warning" role="status">
            Conflicts:{" "}
            {r.conflicts.map((c) => (
              <span key={`${c.op}-${c.secretKey}`}>
                <code>{c.secretKey}</code> ({c.op}): {c.reason}{" "}
              </span>
            ))}
          </div>
        ) : null}
        <table className="table" aria-label="Changes">
          <TableHead columns={["Change", "Key", "New value", "Comment"]} />
          <tbody>
            {r.commits.map((c) => (
              <tr key={`${c.op}-${c.secretKey}`}>
                <td>
                  <Badge tone={OP_TONE[c.op]}>{c.op}</Badge>
                </td>
                <th scope="row">
                  <code>{c.secretKey}</code>
                  {c.newSecretName && c.newSecretName !== c.secretKey ? (
                    <>
                      {" "}
                      <span aria-label="renamed to">→</span> <code>{c.newSecretName}</code>
                    </>
                  ) : null}
                </th>
                <td className="secret-value">
                  <ValueCell commit={c} />
                </td>
                <td className="muted small">{c.secretComment ?? ""}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </section>
      <section className="card" aria-labelledby="reviews-title">
        <h2 id="reviews-title">Reviews</h2>
        {r.reviewers.length === 0 ? <Empty>No reviews yet.</Empty> : null}
        {r.reviewers.length > 0 ? (
          <ul aria-label="Reviews" className="versions">
            {r.reviewers.map((review) => (
              <li key={`${review.reviewerType}-${review.reviewerId}`}>
                <strong>{nameOf(names, review.reviewerType, review.userId ?? review.reviewerId)}</strong>{" "}
                <Badge tone={review.status === "approved" ? "ok" : "bad"}>{review.status}</Badge>
                <span className="muted small"> {formatDate(review.createdAt)}</span>
                {review.comment ? <div>{review.comment}</div> : null}
              </li>
            ))}
          </ul>
        ) : null}
        <ErrorBanner error={lastError} />
        {open ? (
          <form aria-label="Review" onSubmit={submitReview} noValidate>
            <Field label="Comment (optional)" value={comment} onChange={(e) => setComment(e.target.value)} />
            <div className="form-actions">
              <Button disabled={busy} onClick={() => act(() => review.mutate("approved"))}>
                Approve
              </Button>
              <Button variant="danger" disabled={busy} onClick={() => act(() => review.mutate("rejected"))}>
                Reject
              </Button>
            </div>
          </form>
        ) : null}
      </section>
      {open ? (
        <section className="card" aria-labelledby="merge-title">
          <h2 id="merge-title">Merge</h2>
          <p className="muted small">
            Merging writes every change above at once, under your current rights; nothing is written before.
          </p>
          {r.policy.enforcementLevel === "soft" ? (
            <Field
              label="Reason to merge without approvals (bypassers only)"
              value={bypassReason}
              onChange={(e) => setBypassReason(e.target.value)}
            />
          ) : null}
          <div className="form-actions">
            <Button variant="secondary" disabled={busy} onClick={() => act(() => setStatus.mutate("close"))}>
              Close without merging
            </Button>
            <Button disabled={busy} onClick={() => act(() => merge.mutate())}>
              Merge
            </Button>
          </div>
        </section>
      ) : !r.hasMerged ? (
        <div className="form-actions">
          <Button variant="secondary" disabled={busy} onClick={() => act(() => setStatus.mutate("open"))}>
            Reopen
          </Button>
        </div>
      ) : null}
    </div>
  );
};

/** A project's change requests: those waiting for the caller's review, all of them, and one in detail. */
export const ChangeRequests = ({ project }: { project: Project }) => {
  const { search } = useLocation();
  const requestId = search.get("request");
  return requestId ? (
    <RequestDetail key={requestId} project={project} requestId={requestId} />
  ) : (
    <RequestList project={project} />
  );
};
