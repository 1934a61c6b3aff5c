import { useState, type FormEvent } from "react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { contract } from "@keyward/contract";
import { ok } from "@keyward/client";
import { useClient } from "../session";
import { Badge, Button, Empty, ErrorBanner, Field, Loading, SelectField, TableHead } from "../ui/components";
import { validate, type FieldErrors } from "../ui/form";
import type { Project } from "./types";

const PROJECT_ROLES = [
  { value: "admin", label: "Admin" },
  { value: "member", label: "Developer" },
  { value: "viewer", label: "Viewer" },
  { value: "no-access", label: "No access" },
];

/** The people of a project: members of the organization added by e-mail with a role, and removed. */
export const ProjectPeople = ({ project }: { project: Project }) => {
  const client = useClient();
  const queryClient = useQueryClient();
  const projectId = project.id;
  const [email, setEmail] = useState("");
  const [role, setRole] = useState("member");
  const [errors, setErrors] = useState<FieldErrors>({});
  const people = useQuery({
    queryKey: ["project-people", projectId],
    queryFn: () => ok(client.users.listProjectMemberships({ params: { projectId } })),
  });
  const refresh = () => queryClient.invalidateQueries({ queryKey: ["project-people", projectId] });
  const add = useMutation({
    mutationFn: (body: typeof contract.users.inviteProjectMembers.body._input) =>
      ok(client.users.inviteProjectMembers({ params: { projectId }, body })),
    onSuccess: async () => {
      setEmail("");
      await refresh();
    },
  });
  const remove = useMutation({
    mutationFn: (who: string) =>
      ok(client.users.removeProjectMembers({ params: { projectId }, body: { emails: [who], usernames: [] } })),
    onSuccess: refresh,
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const checked = validate(contract.users.inviteProjectMembers.body, {
      emails: [email.trim().toLowerCase()],
      roleSlugs: [role],
    });
    setErrors(checked.errors ?? {});
    if (checked.data) add.mutate(checked.data);
  };
  const list = people.data?.memberships ?? [];
  return (
    <div className="stack">
      <section className="card" aria-labelledby="people-title">
        <h2 id="people-title">People in this project</h2>
        <ErrorBanner error={people.error} />
        {people.isPending ? <Loading what="people" /> : null}
        {people.data && list.length === 0 ? <Empty>No people in this project yet.</Empty> : null}
        {list.length > 0 ? (
          <table className="table" aria-label="Project people">
            <TableHead columns={["Person", "Roles"]} actions />
            <tbody>
              {list.map((m) => (
                <tr key={m.id}>
                  <th scope="row">{m.user.email}</th>
                  <td>
                    {m.roles.map((r) => (
                      <Badge key={r.id}>{r.customRoleSlug ?? r.role}</Badge>
                    ))}
                  </td>
                  <td className="row-actions">
                    <Button
                      variant="danger"
                      aria-label={`Remove ${m.user.email}`}
                      disabled={remove.isPending}
                      onClick={() => remove.mutate(m.user.email)}
                    >
                      Remove
                    </Button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        ) : null}
        <ErrorBanner error={remove.error} />
      </section>
      {people.error ? null : (
        <form className="card inline-form" onSubmit={submit} noValidate aria-labelledby="add-person-title">
          <h2 id="add-person-title">Add a person</h2>
          <Field
            label="E-mail"
            type="email"
            value={email}
            onChange={(e) => setEmail(e.target.value)}
            error={errors.emails}
            hint="A member of the organization."
          />
          <SelectField label="Project role" value={role} onChange={setRole} options={PROJECT_ROLES} />
          <ErrorBanner error={add.error ?? errors.roleSlugs} />
          <Button type="submit" disabled={add.isPending}>
            Add to project
          </Button>
        </form>
      )}
    </div>
  );
};
