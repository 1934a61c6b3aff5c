import { useState, type FormEvent } from "react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { ChangeRequest, FolderCommit, ResourceChange } from "@keyward/contract";
import { ok } from "@keyward/client";
import { useClient } from "../session";
import { setSearch } from "../router";
import { Badge, Button, Empty, ErrorBanner, Field, Loading, formatDateTime } from "../ui/components";
import { SecretValue } from "../ui/secret-value";
import { EnvironmentPicker, PathCrumbs, useFolderScope } from "./folders";
import { ChangeRequestOpened } from "./change-request-notice";
import { joinPath, type Project, type Scope } from "./types";

/** Commits per page of a folder's history. */
const COMMITS_PAGE = 20;

const placeOf = (scope: Scope) => ({ projectId: scope.projectId, environment: scope.environment });

/** The folders under the one shown, to walk the tree (read-only: history creates nothing). */
const SubFolders = ({ scope }: { scope: Scope }) => {
  const client = useClient();
  const folders = useQuery({
    queryKey: ["folders", scope],
    queryFn: () => ok(client.folders.list({ query: { ...placeOf(scope), path: scope.path } })),
  });
  return (
    <div className="folders">
      <PathCrumbs path={scope.path} root={scope.environment} />
      <ErrorBanner error={folders.error} />
      {folders.data?.folders.length ? (
        <ul className="folder-list" aria-label="Folders">
          {folders.data.folders.map((folder) => (
            <li key={folder.id}>
              <button
                type="button"
                className="folder"
                onClick={() => setSearch({ path: joinPath(scope.path, folder.name) })}
              >
                {folder.name}
              </button>
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
};

const KIND_TONE = { create: "ok", update: "warn", delete: "bad" } as const;

/** What one commit changed: each key with what was written (values masked until revealed). */
const CommitChanges = ({ scope, commit }: { scope: Scope; commit: FolderCommit }) => {
  const client = useClient();
  const changes = useQuery({
    queryKey: ["commits", scope.projectId, "changes", commit.id],
    queryFn: () => ok(client.pit.changes({ params: { commitId: commit.id }, query: { projectId: scope.projectId } })),
  });
  if (changes.error) return <ErrorBanner error={changes.error} />;
  if (!changes.data) return <Loading what="changes" />;
  const list = changes.data.changes.changes;
  if (list.length === 0)
    return <Empty>This commit changed no secret and no subfolder (it starts the folder&rsquo;s history).</Empty>;
  return (
    <table className="table" aria-label={`Changes of commit ${commit.commitId}`}>
      <thead>
        <tr>
          <th scope="col">Key</th>
          <th scope="col">Change</th>
          <th scope="col">Version</th>
          <th scope="col">Value written</th>
        </tr>
      </thead>
      <tbody>
        {list.map((change) => {
          const kind = change.changeType === "delete" ? "delete" : change.isUpdate ? "update" : "create";
          if (change.resourceType === "folder")
            return (
              <tr key={change.id}>
                <th scope="row">
                  <code>{change.folderName}/</code>
                </th>
                <td>
                  <Badge tone={KIND_TONE[kind]}>
                    folder {kind === "delete" ? "deleted" : kind === "update" ? "renamed" : "created"}
                  </Badge>
                </td>
                <td>v{change.folderVersion}</td>
                <td>
                  {kind === "update" && change.versions[1] ? (
                    <span className="muted">was {change.versions[1].name}</span>
                  ) : (
                    <span className="muted">—</span>
                  )}
                </td>
              </tr>
            );
          const written = change.versions[0];
          return (
            <tr key={change.id}>
              <th scope="row">
                <code>{change.secretKey}</code>
              </th>
              <td>
                <Badge tone={KIND_TONE[kind]}>
                  {kind === "delete" ? "deleted" : kind === "update" ? "updated" : "created"}
                </Badge>
              </td>
              <td>v{change.secretVersion}</td>
              <td>
                {kind === "delete" || !written ? (
                  <span className="muted">—</span>
                ) : (
                  <SecretValue
                    value={written.secretValue}
                    hidden={written.secretValueHidden}
                    name={`${change.secretKey} at commit ${commit.commitId}`}
                  />
                )}
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
};

/** One row of a rollback's preview: what would happen to a key, and the value it would hold. */
const PreviewRow = ({ change }: { change: ResourceChange }) => {
  if (change.type === "folder")
    return (
      <tr>
        <th scope="row">
          <code>{change.folderName}/</code>
        </th>
        <td>
          <Badge tone={KIND_TONE[change.changeType]}>
            {change.changeType === "create"
              ? "folder restored with its contents"
              : change.changeType === "update"
                ? `folder renamed back from ${change.versions[1]?.name ?? ""}`
                : "folder removed with its contents"}
          </Badge>
        </td>
        <td>
          <span className="muted">—</span>
        </td>
      </tr>
    );
  const content = change.versions[0];
  return (
    <tr>
      <th scope="row">
        <code>{change.secretKey}</code>
      </th>
      <td>
        <Badge tone={KIND_TONE[change.changeType]}>
          {change.changeType === "create" ? "restored" : change.changeType === "update" ? "changed back" : "removed"}
        </Badge>
      </td>
      <td>
        {change.changeType === "delete" || !content ? (
          <span className="muted">—</span>
        ) : (
          <SecretValue
            value={content.secretValue}
            hidden={content.secretValueHidden}
            name={`${change.secretKey} after rollback`}
          />
        )}
      </td>
    </tr>
  );
};

/**
 * The preview of putting the folder back as it was at a commit (what would be restored, changed back and
 * removed), and the rollback itself, against the newest commit the preview saw: if someone wrote in
 * between, the server refuses and the preview is shown again. In a protected folder a change request is
 * opened instead.
 */
const RollbackPreview = ({
  scope,
  commit,
  latest,
  onChangeRequest,
}: {
  scope: Scope;
  commit: FolderCommit;
  latest: FolderCommit;
  onChangeRequest: (request: ChangeRequest) => void;
}) => {
  const client = useClient();
  const queryClient = useQueryClient();
  const [message, setMessage] = useState("");
  const preview = useQuery({
    queryKey: ["commits", scope.projectId, "compare", commit.id, latest.id],
    queryFn: () =>
      ok(
        client.pit.compare({
          params: { commitId: commit.id },
          query: { ...placeOf(scope), folderId: commit.folderId, secretPath: scope.path },
        }),
      ),
  });
  const rollback = useMutation({
    mutationFn: () =>
      ok(
        client.pit.rollback({
          params: { commitId: commit.id },
          body: {
            ...placeOf(scope),
            folderId: commit.folderId,
            deepRollback: false,
            message: message.trim() || undefined,
            latestCommitId: latest.id,
          },
        }),
      ),
    onSuccess: async (result) => {
      if ("approval" in result) onChangeRequest(result.approval);
      await queryClient.invalidateQueries({ queryKey: ["commits", scope.projectId] });
      await queryClient.invalidateQueries({ queryKey: ["secrets"] });
    },
  });
  if (preview.error) return <ErrorBanner error={preview.error} />;
  if (!preview.data) return <Loading what="preview" />;
  const changes = preview.data.flatMap((folder) => folder.changes);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    rollback.mutate();
  };
  if (rollback.data && "success" in rollback.data)
    return (
      <div role="status" className="banner banner-info">
        Rolled back to commit {commit.commitId}: {rollback.data.totalChanges} change
        {rollback.data.totalChanges === 1 ? "" : "s"}, written as a new commit.
      </div>
    );
  if (changes.length === 0) return <Empty>The folder is already as it was at this commit.</Empty>;
  return (
    <div className="stack">
      <table className="table" aria-label={`Rollback to commit ${commit.commitId}`}>
        <thead>
          <tr>
            <th scope="col">Key</th>
            <th scope="col">Would be</th>
            <th scope="col">Value after</th>
          </tr>
        </thead>
        <tbody>
          {changes.map((change) => (
            <PreviewRow key={change.id} change={change} />
          ))}
        </tbody>
      </table>
      <form className="inline-form" onSubmit={submit}>
        <Field
          label="Message (optional)"
          value={message}
          maxLength={256}
          onChange={(e) => setMessage(e.target.value)}
        />
        <Button type="submit" variant="danger" disabled={rollback.isPending}>
          Roll back to commit {commit.commitId}
        </Button>
      </form>
      <ErrorBanner error={rollback.error} />
    </div>
  );
};

type Opened = { commit: FolderCommit; view: "changes" | "rollback" } | null;

/**
 * A folder's history (point-in-time recovery): every commit — one per transaction that wrote to the
 * folder — newest first, who made it and what it changed; any earlier state previewed and rolled back to
 * as new versions (history is never rewritten).
 */
export const History = ({ project }: { project: Project }) => {
  const client = useClient();
  const { environments, environment, path, scope } = useFolderScope(project);
  const scopeKey = `${environment}\u0000${path}`;
  const [paging, setPaging] = useState({ scopeKey, offset: 0 });
  const offset = paging.scopeKey === scopeKey ? paging.offset : 0;
  const [opened, setOpened] = useState<Opened>(null);
  const [request, setRequest] = useState<ChangeRequest | null>(null);
  const commits = useQuery({
    queryKey: ["commits", project.id, scope, offset],
    enabled: environment !== "",
    queryFn: () => ok(client.pit.list({ query: { ...placeOf(scope), path, offset, limit: COMMITS_PAGE } })),
  });
  // On an older page the newest commit (what a rollback is checked against) is fetched on its own.
  const newest = useQuery({
    queryKey: ["commits", project.id, scope, "newest"],
    enabled: environment !== "" && offset > 0,
    queryFn: () => ok(client.pit.list({ query: { ...placeOf(scope), path, offset: 0, limit: 1 } })),
  });
  if (environments.length === 0) return <Empty>This project has no environments yet.</Empty>;
  const list = commits.data?.commits ?? [];
  const latest = list.find((c) => c.isLatest) ?? newest.data?.commits[0];
  const shown = opened && list.some((c) => c.id === opened.commit.id) ? opened : null;
  return (
    <div className="stack">
      <div className="toolbar">
        <EnvironmentPicker project={project} environment={environment} />
      </div>
      <SubFolders scope={scope} />
      {request ? <ChangeRequestOpened request={request} onDismiss={() => setRequest(null)} /> : null}
      <ErrorBanner error={commits.error} />
      {commits.isPending ? <Loading what="history" /> : null}
      {commits.data && list.length === 0 ? <Empty>This folder has no history yet.</Empty> : null}
      {list.length > 0 ? (
        <table className="table" aria-label="Commits">
          <thead>
            <tr>
              <th scope="col">Commit</th>
              <th scope="col">Message</th>
              <th scope="col">By</th>
              <th scope="col">When</th>
              <th scope="col">Changes</th>
              <th scope="col">
                <span className="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {list.map((commit) => (
              <tr key={commit.id}>
                <th scope="row">
                  #{commit.commitId} {commit.isLatest ? <Badge tone="ok">current</Badge> : null}
                </th>
                <td>{commit.message}</td>
                <td>{commit.actorMetadata.name ?? commit.actorType}</td>
                <td className="small">{formatDateTime(commit.createdAt)}</td>
                <td>{commit.changesCount}</td>
                <td className="actions">
                  <Button variant="secondary" onClick={() => setOpened({ commit, view: "changes" })}>
                    Changes<span className="sr-only"> of commit {commit.commitId}</span>
                  </Button>
                  {!commit.isLatest && latest ? (
                    <Button variant="secondary" onClick={() => setOpened({ commit, view: "rollback" })}>
                      Roll back to here<span className="sr-only"> (commit {commit.commitId})</span>
                    </Button>
                  ) : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {commits.data && (offset > 0 || commits.data.hasMore) ? (
        <nav className="row" aria-label="History pages">
          <Button
            variant="secondary"
            disabled={offset === 0}
            onClick={() => setPaging({ scopeKey, offset: Math.max(0, offset - COMMITS_PAGE) })}
          >
            Newer
          </Button>
          <span className="muted small">
            Commits {offset + 1}–{offset + list.length} of {commits.data.total}
          </span>
          <Button
            variant="secondary"
            disabled={!commits.data.hasMore}
            onClick={() => setPaging({ scopeKey, offset: offset + COMMITS_PAGE })}
          >
            Older
          </Button>
        </nav>
      ) : null}
      {shown ? (
        <section className="card" aria-labelledby="commit-detail">
          <h2 id="commit-detail">
            {shown.view === "changes" ? "Changes of" : "Roll back to"} commit {shown.commit.commitId}
          </h2>
          <p className="muted small">
            {shown.commit.message} · {shown.commit.actorMetadata.name ?? shown.commit.actorType} ·{" "}
            {formatDateTime(shown.commit.createdAt)}
          </p>
          {shown.view === "changes" ? (
            <CommitChanges scope={scope} commit={shown.commit} />
          ) : latest ? (
            <RollbackPreview scope={scope} commit={shown.commit} latest={latest} onChangeRequest={setRequest} />
          ) : null}
        </section>
      ) : null}
    </div>
  );
};
