import { useState } from "react";
import { useMutation, useQueries, useQueryClient } from "@tanstack/react-query";
import type { ChangeRequest } from "@keyward/contract";
import { KeywardError, ok } from "@keyward/client";
import { useClient } from "../session";
import { setSearch, useLocation } from "../router";
import { Badge, Button, Empty, ErrorBanner, Loading } from "../ui/components";
import { SecretValue } from "../ui/secret-value";
import type { Permissions } from "../ui/permissions";
import { PathCrumbs } from "./folders";
import { listFolderSecrets } from "./secret-list";
import { ChangeRequestOpened } from "./change-request-notice";
import { CellEditor, rightsAt, useMyPermissions } from "./secret-cell";
import { joinPath, type Project, type Scope, type Secret } from "./types";

type Column = { slug: string; name: string; secrets?: Map<string, Secret>; folders: string[]; refusal?: string };

/** Why a column has no secrets: the folder is not in that environment, or the caller may not read there. */
const refusalOf = (error: unknown) => {
  if (error instanceof KeywardError && error.status === 404) return "no such folder";
  if (error instanceof KeywardError && error.status === 403) return "not allowed";
  return error ? "could not load" : undefined;
};

const Cell = ({
  scope,
  secretKey,
  column,
  may,
  onChangeRequest,
}: {
  scope: Scope;
  secretKey: string;
  column: Column;
  may: Permissions | undefined;
  onChangeRequest: (request: ChangeRequest) => void;
}) => {
  const client = useClient();
  const queryClient = useQueryClient();
  const [editing, setEditing] = useState(false);
  const remove = useMutation({
    mutationFn: () =>
      ok(
        client.secretsV3.delete({
          params: { secretName: secretKey },
          body: { workspaceId: scope.projectId, environment: scope.environment, secretPath: scope.path },
        }),
      ),
    onSuccess: async (result) => {
      if ("approval" in result) onChangeRequest(result.approval);
      await queryClient.invalidateQueries({ queryKey: ["secrets"] });
    },
  });
  if (!column.secrets) return <td className="muted small">{column.refusal ?? "…"}</td>;
  const secret = column.secrets.get(secretKey);
  if (editing)
    return (
      <td>
        <CellEditor
          scope={scope}
          secretKey={secretKey}
          secret={secret}
          onDone={() => setEditing(false)}
          onChangeRequest={onChangeRequest}
        />
      </td>
    );
  const where = `${secretKey} in ${column.name}`;
  const rights = rightsAt(may, scope, secretKey, secret);
  if (!secret && !rights.see) return <td className="muted small">not allowed</td>;
  return (
    <td>
      {secret ? (
        <SecretValue value={secret.secretValue} hidden={secret.secretValueHidden} name={where} />
      ) : (
        <Badge tone="warn">missing</Badge>
      )}{" "}
      {(secret ? rights.edit : rights.create) ? (
        <Button variant="secondary" onClick={() => setEditing(true)}>
          {secret ? "Edit" : "Add"}
          <span className="sr-only"> {where}</span>
        </Button>
      ) : null}
      {secret && rights.delete ? (
        <Button
          variant="ghost"
          disabled={remove.isPending}
          onClick={() => {
            if (window.confirm(`Delete ${where}?`)) remove.mutate();
          }}
        >
          Delete<span className="sr-only"> {where}</span>
        </Button>
      ) : null}
      <ErrorBanner error={remove.error} />
    </td>
  );
};

/**
 * One folder across every environment of a project: a row per key, a column per environment, a key an
 * environment lacks marked missing. Each cell reveals, copies, edits, adds or deletes in place with the
 * same rules as the API: a value the caller may not read says so, a column the server refused says why, a
 * key the caller's rules would not let them see there says "not allowed" (a list shows only what one may
 * see), and only the actions those rules allow are offered.
 */
export const SecretsOverview = ({ project }: { project: Project }) => {
  const client = useClient();
  const { search } = useLocation();
  const path = search.get("path") ?? "/";
  const [opened, setOpened] = useState<ChangeRequest | null>(null);
  const environments = [...project.environments].sort((a, b) => a.position - b.position);
  const where = (environment: string) => ({ workspaceId: project.id, environment });
  const secretLists = useQueries({
    queries: environments.map((env) => ({
      queryKey: ["secrets", "overview", { projectId: project.id, environment: env.slug, path }],
      queryFn: () => listFolderSecrets(client, { ...where(env.slug), secretPath: path }),
      retry: false,
    })),
  });
  // The caller's own rules say which absent keys they could not see, and which actions to offer.
  const may = useMyPermissions(project.id);
  const folderLists = useQueries({
    queries: environments.map((env) => ({
      queryKey: ["folders", { projectId: project.id, environment: env.slug, path }],
      queryFn: () => ok(client.folders.list({ query: { ...where(env.slug), path } })),
      retry: false,
    })),
  });
  if (environments.length === 0) return <Empty>This project has no environments yet.</Empty>;
  const columns: Column[] = environments.map((env, i) => {
    const list = secretLists[i]!;
    return {
      slug: env.slug,
      name: env.name,
      secrets: list.data ? new Map(list.data.secrets.map((s) => [s.secretKey, s])) : undefined,
      folders: folderLists[i]!.data?.folders.map((f) => f.name) ?? [],
      refusal: refusalOf(list.error),
    };
  });
  const keys = [...new Set(columns.flatMap((c) => [...(c.secrets?.keys() ?? [])]))].sort();
  const folders = [...new Set(columns.flatMap((c) => c.folders))].sort();
  const loading = secretLists.some((q) => q.isPending);
  return (
    <div className="stack">
      <PathCrumbs path={path} root="root" />
      {folders.length > 0 ? (
        <ul className="folder-list" aria-label="Folders">
          {folders.map((name) => (
            <li key={name}>
              <button type="button" className="folder" onClick={() => setSearch({ path: joinPath(path, name) })}>
                {name}
              </button>
            </li>
          ))}
        </ul>
      ) : null}
      {opened ? <ChangeRequestOpened request={opened} onDismiss={() => setOpened(null)} /> : null}
      {loading ? <Loading what="secrets" /> : null}
      {!loading && keys.length === 0 ? <Empty>No secrets in this folder in any environment.</Empty> : null}
      {keys.length > 0 ? (
        <p className="muted small">
          A key marked missing is not in that environment; &ldquo;not allowed&rdquo; marks one your permissions do not
          let you see there.
        </p>
      ) : null}
      {keys.length > 0 ? (
        <div className="table-scroll">
          <table className="table" aria-label="Secrets across environments">
            <thead>
              <tr>
                <th scope="col">Key</th>
                {columns.map((c) => (
                  <th scope="col" key={c.slug}>
                    {c.name}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {keys.map((key) => {
                const missing = columns.filter(
                  (c) =>
                    c.secrets &&
                    !c.secrets.has(key) &&
                    rightsAt(may, { projectId: project.id, environment: c.slug, path }, key).see,
                ).length;
                return (
                  <tr key={key}>
                    <th scope="row">
                      <code>{key}</code> {missing > 0 ? <Badge tone="warn">missing in {missing}</Badge> : null}
                    </th>
                    {columns.map((c) => (
                      <Cell
                        key={c.slug}
                        scope={{ projectId: project.id, environment: c.slug, path }}
                        secretKey={key}
                        column={c}
                        may={may}
                        onChangeRequest={setOpened}
                      />
                    ))}
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      ) : null}
    </div>
  );
};
