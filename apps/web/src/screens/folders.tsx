import { useState, type FormEvent } from "react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { contract } from "@keyward/contract";
import { ok } from "@keyward/client";
import { useClient } from "../session";
import { setSearch, useLocation } from "../router";
import { Button, ErrorBanner, Field, SelectField } from "../ui/components";
import { validate, type FieldErrors } from "../ui/form";
import { joinPath, type Project, type Scope } from "./types";

/**
 * The environment and folder a project's screen shows, from the address (`env`, `path`): the first
 * environment's root unless the address names another.
 */
export const useFolderScope = (project: Project) => {
  const { search } = useLocation();
  const environments = [...project.environments].sort((a, b) => a.position - b.position);
  const environment = search.get("env") ?? environments[0]?.slug ?? "";
  const path = search.get("path") ?? "/";
  const scope: Scope = { projectId: project.id, environment, path };
  return { environments, environment, path, scope };
};

/** The environment picker of a folder screen: choosing one opens its root. */
export const EnvironmentPicker = ({ project, environment }: { project: Project; environment: string }) => (
  <SelectField
    label="Environment"
    value={environment}
    onChange={(env) => setSearch({ env, path: "/" })}
    options={[...project.environments]
      .sort((a, b) => a.position - b.position)
      .map((env) => ({ value: env.slug, label: env.name }))}
  />
);

/** A folder path as a breadcrumb: `root`, then each segment, each one a button that opens that folder. */
export const PathCrumbs = ({ path, root }: { path: string; root: string }) => {
  const segments = path.split("/").filter(Boolean);
  return (
    <nav aria-label="Folder path" className="crumbs">
      <button type="button" className="linklike" onClick={() => setSearch({ path: "/" })}>
        {root}
      </button>
      {segments.map((segment, i) => (
        <span key={i}>
          {" / "}
          <button
            type="button"
            className="linklike"
            onClick={() => setSearch({ path: `/${segments.slice(0, i + 1).join("/")}` })}
          >
            {segment}
          </button>
        </span>
      ))}
    </nav>
  );
};

/** The folder tree one level at a time: a breadcrumb of the path, then the folders under it. */
export const FolderBar = ({ scope }: { scope: Scope }) => {
  const client = useClient();
  const queryClient = useQueryClient();
  const [name, setName] = useState("");
  const [errors, setErrors] = useState<FieldErrors>({});
  const folders = useQuery({
    queryKey: ["folders", scope],
    queryFn: () =>
      ok(
        client.folders.list({
          query: { workspaceId: scope.projectId, environment: scope.environment, path: scope.path },
        }),
      ),
  });
  const create = useMutation({
    mutationFn: (body: typeof contract.folders.create.body._output) => ok(client.folders.create({ body })),
    onSuccess: async () => {
      setName("");
      await queryClient.invalidateQueries({ queryKey: ["folders", scope] });
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const checked = validate(contract.folders.create.body, {
      workspaceId: scope.projectId,
      environment: scope.environment,
      path: scope.path,
      name,
    });
    setErrors(checked.errors ?? {});
    if (checked.data) create.mutate(checked.data);
  };
  return (
    <div className="folders">
      <PathCrumbs path={scope.path} root={scope.environment} />
      <ErrorBanner error={folders.error} />
      <ul className="folder-list" aria-label="Folders">
        {folders.data?.folders.map((folder) => (
          <li key={folder.id}>
            <button
              type="button"
              className="folder"
              onClick={() => setSearch({ path: joinPath(scope.path, folder.name) })}
            >
              <svg viewBox="0 0 16 16" aria-hidden="true">
                <path d="M1 3.5A1.5 1.5 0 0 1 2.5 2h3.6l1.5 1.5h5.9A1.5 1.5 0 0 1 15 5v7.5a1.5 1.5 0 0 1-1.5 1.5h-11A1.5 1.5 0 0 1 1 12.5z" />
              </svg>
              {folder.name}
            </button>
          </li>
        ))}
      </ul>
      <form className="inline-form" onSubmit={submit} noValidate>
        <Field label="New folder" value={name} onChange={(e) => setName(e.target.value)} error={errors.name} />
        <Button type="submit" variant="secondary" disabled={create.isPending}>
          Create folder
        </Button>
      </form>
      <ErrorBanner error={create.error} />
    </div>
  );
};
