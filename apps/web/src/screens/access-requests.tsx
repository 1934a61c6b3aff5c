import { useState, type FormEvent, type ReactNode } from "react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { contract, type AccessRequest } from "@keyward/contract";
import { ok } from "@keyward/client";
import { useClient } from "../session";
import { useLocation } from "../router";
import {
  Badge,
  Button,
  Empty,
  ErrorBanner,
  Field,
  Loading,
  SelectField,
  TableHead,
  formatDateTime,
} from "../ui/components";
import { validate, type FieldErrors } from "../ui/form";
import type { Project } from "./types";

const TONE = { pending: "warn", approved: "ok", rejected: "bad", expired: "neutral", revoked: "neutral" } as const;

export const requesterOf = (r: AccessRequest) =>
  r.requestedByUser?.email ?? r.requestedByIdentity?.name ?? r.requestedByUserId ?? r.requestedByIdentityId ?? "—";

/** What was asked: read access to an environment and path, for a while or for good. */
export const askedFor = (r: AccessRequest) =>
  `${r.environment} ${r.secretPath}${r.isTemporary ? ` for ${r.temporaryRange}` : ""}`;

/**
 * Ask for access to an environment and path: the policy that covers them names the approvers.
 * Prefilled from the address (`?env=&path=`), as a secret the caller may not read links here.
 */
const RequestAccess = ({ project }: { project: Project }) => {
  const client = useClient();
  const queryClient = useQueryClient();
  const { search } = useLocation();
  const environments = [...project.environments].sort((a, b) => a.position - b.position);
  const [environment, setEnvironment] = useState(search.get("env") ?? environments[0]?.slug ?? "");
  const [secretPath, setSecretPath] = useState(search.get("path") ?? "/");
  const [range, setRange] = useState("1h");
  const [errors, setErrors] = useState<FieldErrors>({});
  const create = useMutation({
    mutationFn: (body: typeof contract.accessApprovalRequests.create.body._output) =>
      ok(client.accessApprovalRequests.create({ query: { projectSlug: project.slug }, body })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ["access-requests", project.id] }),
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const checked = validate(contract.accessApprovalRequests.create.body, {
      permissions: [["read", "secrets", { environment, secretPath }]],
      isTemporary: range.trim() !== "",
      ...(range.trim() ? { temporaryRange: range.trim() } : {}),
    });
    setErrors(checked.errors ?? {});
    if (checked.data) create.mutate(checked.data);
  };
  return (
    <form className="card row" onSubmit={submit} noValidate aria-label="Request access">
      <SelectField
        label="Environment"
        value={environment}
        onChange={setEnvironment}
        options={environments.map((env) => ({ value: env.slug, label: env.name }))}
      />
      <Field label="Secret path" value={secretPath} onChange={(e) => setSecretPath(e.target.value)} />
      <Field
        label="For how long"
        hint="e.g. 1h or 2d; empty asks for lasting access"
        value={range}
        onChange={(e) => setRange(e.target.value)}
        error={errors.temporaryRange ?? errors.permissions}
      />
      <Button type="submit" disabled={create.isPending}>
        Request access
      </Button>
      {create.data ? (
        <p className="small" role="status">
          Requested {askedFor(create.data.approval)}: waiting for {create.data.approval.policy.name}'s approvers.
        </p>
      ) : null}
      <ErrorBanner error={create.error} />
    </form>
  );
};

/** One access request with approve and reject; `project` adds a leading cell naming it (the approvals inbox). */
export const RequestRow = ({
  request,
  projectId,
  project,
}: {
  request: AccessRequest;
  projectId: string;
  project?: ReactNode;
}) => {
  const client = useClient();
  const queryClient = useQueryClient();
  const review = useMutation({
    mutationFn: (status: "approved" | "rejected") =>
      ok(client.accessApprovalRequests.review({ params: { requestId: request.id }, body: { status } })),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: ["access-requests", projectId] }),
  });
  const approvals = request.reviewers.filter((r) => r.status === "approved").length;
  return (
    <tr>
      {project !== undefined ? <td>{project}</td> : null}
      <th scope="row">{requesterOf(request)}</th>
      <td>
        <code>{askedFor(request)}</code>
      </td>
      <td>
        <Badge tone={TONE[request.status]}>{request.status}</Badge>{" "}
        <span className="muted small">
          {approvals} of {request.policy.approvals} approvals
        </span>
      </td>
      <td className="small">{formatDateTime(request.createdAt)}</td>
      <td className="actions">
        {request.status === "pending" ? (
          <>
            <Button disabled={review.isPending} onClick={() => review.mutate("approved")}>
              Approve<span className="sr-only"> {requesterOf(request)}'s request</span>
            </Button>
            <Button variant="danger" disabled={review.isPending} onClick={() => review.mutate("rejected")}>
              Reject<span className="sr-only"> {requesterOf(request)}'s request</span>
            </Button>
          </>
        ) : null}
        <ErrorBanner error={review.error} />
      </td>
    </tr>
  );
};

/**
 * A project's access requests the caller may see, pending first: an approver approves or rejects in
 * place (the server decides who may), and anyone asks for access to an environment and path.
 */
export const AccessRequests = ({ project }: { project: Project }) => {
  const client = useClient();
  const requests = useQuery({
    queryKey: ["access-requests", project.id],
    queryFn: () => ok(client.accessApprovalRequests.list({ query: { projectSlug: project.slug } })),
  });
  const list = [...(requests.data?.requests ?? [])].sort(
    (a, b) => Number(b.status === "pending") - Number(a.status === "pending") || b.createdAt.localeCompare(a.createdAt),
  );
  return (
    <div className="stack">
      <RequestAccess project={project} />
      <ErrorBanner error={requests.error} />
      {requests.isPending ? <Loading what="access requests" /> : null}
      {requests.data && list.length === 0 ? <Empty>No access requests in this project.</Empty> : null}
      {list.length > 0 ? (
        <table className="table" aria-label="Access requests">
          <TableHead columns={["Requested by", "Access to", "Status", "Asked"]} actions />
          <tbody>
            {list.map((r) => (
              <RequestRow key={r.id} request={r} projectId={project.id} />
            ))}
          </tbody>
        </table>
      ) : null}
    </div>
  );
};
