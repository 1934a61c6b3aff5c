import { useState } from "react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { ok } from "@keyward/client";
import { useClient } from "../session";
import { Link } from "../router";
import { Button, Empty, ErrorBanner, Loading, TableHead } from "../ui/components";
import type { ChangeRequest } from "@keyward/contract";
import { SecretValue } from "../ui/secret-value";
import { listFolderSecrets } from "./secret-list";
import { ChangeRequestOpened } from "./change-request-notice";
import { EnvironmentPicker, FolderBar, useFolderScope } from "./folders";
import { SecretEditor, SecretVersions } from "./secret-dialogs";
import { SecretImports } from "./secret-imports";
import { PasteImport, downloadDotenv } from "./secret-paste-import";
import { CellEditor, rightsAt, useMyPermissions } from "./secret-cell";
import type { Permissions } from "../ui/permissions";
import type { Project, Scope, Secret } from "./types";

/**
 * One secret of the folder: its value revealed, copied or edited in place (Enter saves, Cancel leaves it),
 * the full editor for value and comment, its versions, and delete. Edit and Delete are offered only where
 * the caller's own rules allow them; the server still decides.
 */
const SecretRow = ({
  secret,
  scope,
  may,
  onEdit,
  onVersions,
  onChangeRequest,
}: {
  secret: Secret;
  scope: Scope;
  may: Permissions | undefined;
  onEdit: () => void;
  onVersions: () => void;
  onChangeRequest: (request: ChangeRequest) => void;
}) => {
  const client = useClient();
  const queryClient = useQueryClient();
  const [inline, setInline] = useState(false);
  const rights = rightsAt(may, scope, secret.secretKey, secret);
  const remove = useMutation({
    mutationFn: () =>
      ok(
        client.secretsV3.delete({
          params: { secretName: secret.secretKey },
          body: { workspaceId: scope.projectId, environment: scope.environment, secretPath: scope.path },
        }),
      ),
    onSuccess: async (result) => {
      // In a protected folder nothing is deleted: a change request is opened.
      if ("approval" in result) {
        onChangeRequest(result.approval);
        await queryClient.invalidateQueries({ queryKey: ["change-requests", scope.projectId] });
      } else await queryClient.invalidateQueries({ queryKey: ["secrets"] });
    },
  });
  return (
    <tr>
      <th scope="row">
        <code>{secret.secretKey}</code>
      </th>
      <td>
        {inline ? (
          <CellEditor
            scope={scope}
            secretKey={secret.secretKey}
            secret={secret}
            onDone={() => setInline(false)}
            onChangeRequest={onChangeRequest}
          />
        ) : (
          <>
            <SecretValue value={secret.secretValue} hidden={secret.secretValueHidden} name={secret.secretKey} />
            {rights.edit && !secret.secretValueHidden ? (
              <Button variant="ghost" onClick={() => setInline(true)}>
                Edit value<span className="sr-only"> of {secret.secretKey}</span>
              </Button>
            ) : null}
          </>
        )}
        {secret.secretValueHidden ? (
          <>
            {" "}
            <Link
              href={`/projects/${scope.projectId}/access-requests?${new URLSearchParams({ env: scope.environment, path: scope.path })}`}
            >
              Request access
            </Link>
          </>
        ) : null}
      </td>
      <td className="muted small">{secret.secretComment}</td>
      <td>v{secret.version}</td>
      <td className="actions">
        {rights.edit ? (
          <Button variant="secondary" onClick={onEdit}>
            Edit
          </Button>
        ) : null}
        <Button variant="secondary" onClick={onVersions}>
          Versions
        </Button>
        {rights.delete ? (
          <Button
            variant="danger"
            disabled={remove.isPending}
            onClick={() => {
              if (window.confirm(`Delete ${secret.secretKey}?`)) remove.mutate();
            }}
          >
            Delete
          </Button>
        ) : null}
        {remove.error ? <ErrorBanner error={remove.error} /> : null}
      </td>
    </tr>
  );
};

/** Rows per page of the secrets table: a folder of thousands of secrets renders one page at a time. */
export const SECRETS_PAGE = 100;

/** Previous/next over the pages of a long folder, with where the page sits in it. */
const Pager = ({ page, total, onPage }: { page: number; total: number; onPage: (page: number) => void }) => {
  const pages = Math.ceil(total / SECRETS_PAGE);
  if (pages <= 1) return null;
  const first = page * SECRETS_PAGE + 1;
  const last = Math.min(total, (page + 1) * SECRETS_PAGE);
  return (
    <nav className="row" aria-label="Secrets pages">
      <Button variant="secondary" disabled={page === 0} onClick={() => onPage(page - 1)}>
        Previous page
      </Button>
      <span className="muted small" aria-live="polite">
        Secrets {first}–{last} of {total} (page {page + 1} of {pages})
      </span>
      <Button variant="secondary" disabled={page >= pages - 1} onClick={() => onPage(page + 1)}>
        Next page
      </Button>
    </nav>
  );
};

type Editing =
  | { mode: "create" }
  | { mode: "import" }
  | { mode: "edit"; secret: Secret }
  | { mode: "versions"; secret: Secret }
  | null;

export const Secrets = ({ project }: { project: Project }) => {
  const client = useClient();
  const { environments, environment, path, scope } = useFolderScope(project);
  const [editing, setEditing] = useState<Editing>(null);
  const may = useMyPermissions(project.id);
  const [opened, setOpened] = useState<ChangeRequest | null>(null);
  // The page belongs to the folder it was chosen in: another environment or folder starts at page one.
  const scopeKey = `${environment}\u0000${path}`;
  const [paging, setPaging] = useState({ scopeKey, page: 0 });
  const secrets = useQuery({
    queryKey: ["secrets", scope],
    enabled: environment !== "",
    queryFn: () =>
      listFolderSecrets(client, {
        workspaceId: project.id,
        environment,
        secretPath: path,
        includeImports: "true",
      }),
  });
  if (environments.length === 0) return <Empty>This project has no environments yet.</Empty>;
  const list = secrets.data?.secrets ?? [];
  const lastPage = Math.max(0, Math.ceil(list.length / SECRETS_PAGE) - 1);
  const page = paging.scopeKey === scopeKey ? Math.min(paging.page, lastPage) : 0;
  const shown = list.slice(page * SECRETS_PAGE, (page + 1) * SECRETS_PAGE);
  return (
    <div className="stack">
      <div className="toolbar">
        <EnvironmentPicker project={project} environment={environment} />
        <Button onClick={() => setEditing({ mode: "create" })}>Add secret</Button>
        <Button variant="secondary" onClick={() => setEditing({ mode: "import" })}>
          Import
        </Button>
        <Button variant="secondary" disabled={list.length === 0} onClick={() => downloadDotenv(scope, list)}>
          Download .env
        </Button>
      </div>
      <FolderBar scope={scope} />
      {opened ? <ChangeRequestOpened request={opened} onDismiss={() => setOpened(null)} /> : null}
      <ErrorBanner error={secrets.error} />
      {secrets.isPending ? <Loading what="secrets" /> : null}
      {secrets.data && list.length === 0 ? <Empty>No secrets in this folder.</Empty> : null}
      <Pager page={page} total={list.length} onPage={(next) => setPaging({ scopeKey, page: next })} />
      {list.length > 0 ? (
        <table className="table" aria-label="Secrets">
          <TableHead columns={["Key", "Value", "Comment", "Version"]} actions />
          <tbody>
            {shown.map((secret) => (
              <SecretRow
                key={secret.id}
                secret={secret}
                scope={scope}
                may={may}
                onEdit={() => setEditing({ mode: "edit", secret })}
                onVersions={() => setEditing({ mode: "versions", secret })}
                onChangeRequest={setOpened}
              />
            ))}
          </tbody>
        </table>
      ) : null}
      <SecretImports scope={scope} ownKeys={list.map((s) => s.secretKey)} imported={secrets.data?.imports ?? []} />
      {editing?.mode === "create" ? (
        <SecretEditor scope={scope} onClose={() => setEditing(null)} onChangeRequest={setOpened} />
      ) : null}
      {editing?.mode === "import" ? (
        <PasteImport scope={scope} current={list} onClose={() => setEditing(null)} onChangeRequest={setOpened} />
      ) : null}
      {editing?.mode === "edit" ? (
        <SecretEditor
          scope={scope}
          secret={editing.secret}
          onClose={() => setEditing(null)}
          onChangeRequest={setOpened}
        />
      ) : null}
      {editing?.mode === "versions" ? (
        <SecretVersions secret={editing.secret} onClose={() => setEditing(null)} />
      ) : null}
    </div>
  );
};
