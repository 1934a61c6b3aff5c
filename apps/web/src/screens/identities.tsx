import { useState, type FormEvent } from "react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { contract } from "@keyward/contract";
import { ok } from "@keyward/client";
import { useClient } from "../session";
import { setSearch, useLocation } from "../router";
import { Badge, Button, Empty, ErrorBanner, Field, Loading, PageHeader, formatDate, TableHead } from "../ui/components";
import { validate, type FieldErrors } from "../ui/form";
import { IdentityDetail } from "./identity-detail";

const CreateIdentity = ({ orgId }: { orgId: string }) => {
  const client = useClient();
  const queryClient = useQueryClient();
  const [name, setName] = useState("");
  const [role, setRole] = useState("no-access");
  const [errors, setErrors] = useState<FieldErrors>({});
  const create = useMutation({
    mutationFn: (body: typeof contract.identities.create.body._output) => ok(client.identities.create({ body })),
    onSuccess: async ({ identity }) => {
      setName("");
      await queryClient.invalidateQueries({ queryKey: ["identities"] });
      setSearch({ identity: identity.id });
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const checked = validate(contract.identities.create.body, { name, role, organizationId: orgId });
    setErrors(checked.errors ?? {});
    if (checked.data) create.mutate(checked.data);
  };
  return (
    <form className="card inline-form" onSubmit={submit} noValidate>
      <h2>New identity</h2>
      <Field label="Name" value={name} onChange={(e) => setName(e.target.value)} error={errors.name} />
      <Field label="Organization role" value={role} onChange={(e) => setRole(e.target.value)} error={errors.role} />
      <ErrorBanner error={create.error ?? errors.organizationId} />
      <Button type="submit" disabled={create.isPending}>
        Create identity
      </Button>
    </form>
  );
};

export const Identities = () => {
  const client = useClient();
  const { search } = useLocation();
  const selected = search.get("identity");
  // Every identity of the organization, those created inside a project too (the quick start's is).
  const identities = useQuery({
    queryKey: ["identities"],
    queryFn: () => ok(client.identities.list({ query: { limit: 1000, includeProjectIdentities: "true" } })),
  });
  const projects = useQuery({ queryKey: ["projects"], queryFn: () => ok(client.projects.list({ query: {} })) });
  const projectName = (id: string) => projects.data?.projects.find((p) => p.id === id)?.name ?? "a project";
  const list = identities.data?.identities ?? [];
  return (
    <section className="stack">
      <PageHeader title="Identities" />
      <ErrorBanner error={identities.error} />
      {identities.isPending ? <Loading what="identities" /> : null}
      {identities.data && list.length === 0 ? <Empty>No identities.</Empty> : null}
      {list.length > 0 ? (
        <table className="table" aria-label="Identities">
          <TableHead columns={["Name", "Belongs to", "Role", "Auth methods", "Created"]} />
          <tbody>
            {list.map((identity) => (
              <tr key={identity.id} className={identity.id === selected ? "selected" : undefined}>
                <th scope="row">
                  <button type="button" className="linklike" onClick={() => setSearch({ identity: identity.id })}>
                    {identity.name}
                  </button>
                </th>
                <td>{identity.projectId ? projectName(identity.projectId) : "Organization"}</td>
                <td>{identity.role}</td>
                <td>
                  {identity.authMethods.length === 0 ? <span className="muted">none</span> : null}
                  {identity.authMethods.map((m) => (
                    <Badge key={m}>{m}</Badge>
                  ))}
                  {identity.activeLockoutAuthMethods.map((m) => (
                    <Badge key={`lock-${m}`} tone="bad">
                      {m} locked
                    </Badge>
                  ))}
                </td>
                <td>{formatDate(identity.createdAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {selected ? <IdentityDetail identityId={selected} /> : null}
      {list[0] ? <CreateIdentity orgId={list[0].orgId} /> : null}
    </section>
  );
};
