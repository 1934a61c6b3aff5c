import { useState, type FormEvent } from "react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { contract } from "@keyward/contract";
import { ok } from "@keyward/client";
import { useClient } from "../session";
import { Button, Empty, ErrorBanner, Field, Loading, formatDate, TableHead } from "../ui/components";
import { validate, type FieldErrors } from "../ui/form";
import type { Project } from "./types";

export const Environments = ({ project }: { project: Project }) => {
  const client = useClient();
  const queryClient = useQueryClient();
  const projectId = project.id;
  const [name, setName] = useState("");
  const [slug, setSlug] = useState("");
  const [errors, setErrors] = useState<FieldErrors>({});
  const environments = useQuery({
    queryKey: ["environments", projectId],
    queryFn: () => ok(client.projects.listEnvironments({ params: { projectId } })),
  });
  const refresh = () =>
    Promise.all([
      queryClient.invalidateQueries({ queryKey: ["environments", projectId] }),
      queryClient.invalidateQueries({ queryKey: ["project", projectId] }),
    ]);
  const create = useMutation({
    mutationFn: (body: { name: string; slug: string }) =>
      ok(client.projects.createEnvironment({ params: { projectId }, body })),
    onSuccess: async () => {
      setName("");
      setSlug("");
      await refresh();
    },
  });
  const remove = useMutation({
    mutationFn: (environmentId: string) =>
      ok(client.projects.deleteEnvironment({ params: { projectId, environmentId } })),
    onSuccess: refresh,
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const checked = validate(contract.projects.createEnvironment.body, { name, slug });
    setErrors(checked.errors ?? {});
    if (checked.data) create.mutate(checked.data);
  };
  const list = [...(environments.data?.environments ?? [])].sort((a, b) => a.position - b.position);
  return (
    <div className="stack">
      <ErrorBanner error={environments.error ?? remove.error} />
      {environments.isPending ? <Loading what="environments" /> : null}
      {environments.data && list.length === 0 ? <Empty>No environments.</Empty> : null}
      {list.length > 0 ? (
        <table className="table">
          <caption className="sr-only">Environments</caption>
          <TableHead columns={["Position", "Name", "Slug", "Created"]} actions />
          <tbody>
            {list.map((env) => (
              <tr key={env.id}>
                <td>{env.position}</td>
                <td>{env.name}</td>
                <td>
                  <code>{env.slug}</code>
                </td>
                <td>{formatDate(env.createdAt)}</td>
                <td className="actions">
                  <Button variant="danger" onClick={() => remove.mutate(env.id)} aria-label={`Delete ${env.name}`}>
                    Delete
                  </Button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      <form className="card inline-form" onSubmit={submit} noValidate>
        <h2>Add an environment</h2>
        <Field label="Name" value={name} onChange={(e) => setName(e.target.value)} error={errors.name} />
        <Field label="Slug" value={slug} onChange={(e) => setSlug(e.target.value)} error={errors.slug} />
        <ErrorBanner error={create.error} />
        <Button type="submit" disabled={create.isPending}>
          Add environment
        </Button>
      </form>
    </div>
  );
};
