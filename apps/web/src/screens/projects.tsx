import { useState, type FormEvent } from "react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { contract } from "@keyward/contract";
import { ok } from "@keyward/client";
import { useClient } from "../session";
import { Link, navigate } from "../router";
import { Badge, Button, Dialog, Empty, ErrorBanner, Field, Loading, PageHeader, SelectField } from "../ui/components";
import { validate, type FieldErrors } from "../ui/form";

const TYPES = ["secret-manager", "cert-manager", "kms"] as const;

const CreateProject = ({ onClose }: { onClose: () => void }) => {
  const client = useClient();
  const queryClient = useQueryClient();
  const [name, setName] = useState("");
  const [description, setDescription] = useState("");
  const [type, setType] = useState<string>("secret-manager");
  const [errors, setErrors] = useState<FieldErrors>({});
  const create = useMutation({
    mutationFn: (body: typeof contract.projects.create.body._input) => ok(client.projects.create({ body })),
    onSuccess: async ({ project }) => {
      await queryClient.invalidateQueries({ queryKey: ["projects"] });
      onClose();
      navigate(`/projects/${project.id}`);
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const checked = validate(contract.projects.create.body, {
      projectName: name,
      projectDescription: description || undefined,
      type,
    });
    setErrors(checked.errors ?? {});
    if (checked.data) create.mutate(checked.data);
  };
  return (
    <Dialog title="New project" onClose={onClose}>
      <form onSubmit={submit} noValidate>
        <Field label="Name" value={name} onChange={(e) => setName(e.target.value)} error={errors.projectName} />
        <Field
          label="Description"
          value={description}
          onChange={(e) => setDescription(e.target.value)}
          error={errors.projectDescription}
        />
        <SelectField
          label="Type"
          value={type}
          onChange={setType}
          options={TYPES.map((t) => ({ value: t, label: t }))}
        />
        <ErrorBanner error={create.error} />
        <div className="form-actions">
          <Button type="submit" disabled={create.isPending}>
            Create project
          </Button>
        </div>
      </form>
    </Dialog>
  );
};

export const Projects = () => {
  const client = useClient();
  const [creating, setCreating] = useState(false);
  const projects = useQuery({ queryKey: ["projects"], queryFn: () => ok(client.projects.list({ query: {} })) });
  return (
    <section>
      <PageHeader title="Projects">
        <Button onClick={() => setCreating(true)}>New project</Button>
      </PageHeader>
      {creating ? <CreateProject onClose={() => setCreating(false)} /> : null}
      <ErrorBanner error={projects.error} />
      {projects.isPending ? <Loading what="projects" /> : null}
      {projects.data && projects.data.projects.length === 0 ? (
        <Empty>No projects yet. Create one to store secrets, certificates or keys.</Empty>
      ) : null}
      <ul className="grid">
        {projects.data?.projects.map((project) => (
          <li key={project.id} className="card">
            <h2>
              <Link href={`/projects/${project.id}`}>{project.name}</Link>
            </h2>
            <p className="muted small">
              {project.slug} · <Badge>{project.type}</Badge>
            </p>
            {project.description ? <p>{project.description}</p> : null}
            <p className="small">
              Environments:{" "}
              {project.environments.length === 0
                ? "none"
                : [...project.environments]
                    .sort((a, b) => a.position - b.position)
                    .map((env) => env.name)
                    .join(", ")}
            </p>
          </li>
        ))}
      </ul>
    </section>
  );
};
