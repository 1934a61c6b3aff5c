import { useState, type FormEvent } from "react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { contract, type OidcConfig, type OrgMembership } from "@keyward/contract";
import { KeywardError, ok } from "@keyward/client";
import { useClient } from "../session";
import { Link } from "../router";
import {
  Badge,
  Button,
  Empty,
  ErrorBanner,
  Field,
  Loading,
  PageHeader,
  SelectField,
  TableHead,
} from "../ui/components";
import { validate, type FieldErrors } from "../ui/form";

export const ORG_ROLES = [
  { value: "admin", label: "Admin" },
  { value: "member", label: "Member" },
  { value: "no-access", label: "No access" },
];

const TABS = [
  { tab: "people", label: "People" },
  { tab: "sso", label: "Single sign-on" },
];

const useOrganization = () => {
  const client = useClient();
  return useQuery({
    queryKey: ["organizations"],
    queryFn: () => ok(client.users.organizations()),
    select: (answer) => answer.organizations[0] ?? null,
  });
};

const emailsOf = (text: string) =>
  text
    .split(/[\s,;]+/)
    .map((e) => e.trim().toLowerCase())
    .filter(Boolean);

const Invite = ({ orgId }: { orgId: string }) => {
  const client = useClient();
  const queryClient = useQueryClient();
  const [emails, setEmails] = useState("");
  const [role, setRole] = useState("member");
  const [projectIds, setProjectIds] = useState<string[]>([]);
  const [errors, setErrors] = useState<FieldErrors>({});
  const projects = useQuery({ queryKey: ["projects"], queryFn: () => ok(client.projects.list({ query: {} })) });
  const invite = useMutation({
    mutationFn: (body: typeof contract.users.inviteToOrg.body._input) => ok(client.users.inviteToOrg({ body })),
    onSuccess: async () => {
      setEmails("");
      setProjectIds([]);
      await queryClient.invalidateQueries({ queryKey: ["org-people"] });
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const checked = validate(contract.users.inviteToOrg.body, {
      inviteeEmails: emailsOf(emails),
      organizationId: orgId,
      organizationRoleSlug: role,
      ...(projectIds.length ? { projectIds } : {}),
    });
    setErrors(checked.errors ?? {});
    if (checked.data) invite.mutate(checked.data);
  };
  return (
    <form className="card stack" onSubmit={submit} noValidate aria-labelledby="invite-title">
      <h2 id="invite-title">Invite people</h2>
      <Field
        label="E-mails"
        value={emails}
        onChange={(e) => setEmails(e.target.value)}
        error={errors.inviteeEmails}
        hint="One or more, separated by commas. Each claims the invitation at first sign-in with that verified e-mail."
      />
      <SelectField label="Organization role" value={role} onChange={setRole} options={ORG_ROLES} />
      {projects.data && projects.data.projects.length > 0 ? (
        <fieldset className="field">
          <legend>Projects (optional, up to 5)</legend>
          {projects.data.projects.map((project) => (
            <label key={project.id} className="check">
              <input
                type="checkbox"
                checked={projectIds.includes(project.id)}
                onChange={(e) =>
                  setProjectIds((ids) =>
                    e.target.checked ? [...ids, project.id] : ids.filter((id) => id !== project.id),
                  )
                }
              />{" "}
              {project.name}
            </label>
          ))}
        </fieldset>
      ) : null}
      <ErrorBanner error={invite.error ?? errors.projectIds ?? errors.organizationRoleSlug} />
      <div className="form-actions">
        <Button type="submit" disabled={invite.isPending}>
          Send invitations
        </Button>
      </div>
      {invite.data ? (
        <div className="banner banner-info" role="status">
          <p>{invite.data.message}. Send each person their link:</p>
          <ul aria-label="Invitation links">
            {invite.data.completeInviteLinks.map((link) => (
              <li key={link.email}>
                {link.email}: <code>{link.link}</code>
              </li>
            ))}
          </ul>
        </div>
      ) : null}
    </form>
  );
};

const PersonRow = ({ orgId, membership }: { orgId: string; membership: OrgMembership }) => {
  const client = useClient();
  const queryClient = useQueryClient();
  const done = () => queryClient.invalidateQueries({ queryKey: ["org-people"] });
  const update = useMutation({
    mutationFn: (body: { role?: string; isActive?: boolean }) =>
      ok(client.users.updateOrgMembership({ params: { orgId, membershipId: membership.id }, body })),
    onSuccess: done,
  });
  const remove = useMutation({
    mutationFn: () => ok(client.users.deleteOrgMembership({ params: { orgId, membershipId: membership.id } })),
    onSuccess: done,
  });
  const email = membership.user?.email ?? membership.inviteEmail ?? "—";
  const name = membership.user ? `${membership.user.firstName} ${membership.user.lastName}`.trim() : "";
  const roles = ORG_ROLES.some((r) => r.value === membership.role)
    ? ORG_ROLES
    : [...ORG_ROLES, { value: membership.role, label: membership.role }];
  return (
    <tr>
      <th scope="row">
        {email}
        {name ? <div className="muted small">{name}</div> : null}
      </th>
      <td>
        <select
          aria-label={`Role of ${email}`}
          value={membership.role}
          disabled={update.isPending}
          onChange={(e) => update.mutate({ role: e.target.value })}
        >
          {roles.map((r) => (
            <option key={r.value} value={r.value}>
              {r.label}
            </option>
          ))}
        </select>
      </td>
      <td>
        {membership.status === "invited" ? <Badge tone="warn">invited</Badge> : <Badge tone="ok">accepted</Badge>}{" "}
        {membership.isActive ? null : <Badge tone="bad">deactivated</Badge>}
      </td>
      <td className="row-actions">
        <Button
          variant="secondary"
          disabled={update.isPending}
          onClick={() => update.mutate({ isActive: !membership.isActive })}
        >
          {membership.isActive ? "Deactivate" : "Activate"}
        </Button>
        <Button variant="danger" disabled={remove.isPending} onClick={() => remove.mutate()}>
          Remove
        </Button>
        <ErrorBanner error={update.error ?? remove.error} />
      </td>
    </tr>
  );
};

const People = ({ orgId }: { orgId: string }) => {
  const client = useClient();
  const people = useQuery({
    queryKey: ["org-people", orgId],
    queryFn: () => ok(client.users.listOrgMemberships({ params: { orgId } })),
  });
  const list = people.data?.users ?? [];
  return (
    <section className="stack" aria-label="People">
      <ErrorBanner error={people.error} />
      {people.isPending ? <Loading what="people" /> : null}
      {people.data && list.length === 0 ? <Empty>Nobody has signed in or been invited yet.</Empty> : null}
      {list.length > 0 ? (
        <table className="table" aria-label="People">
          <TableHead columns={["Person", "Role", "Status"]} actions />
          <tbody>
            {list.map((membership) => (
              <PersonRow key={membership.id} orgId={orgId} membership={membership} />
            ))}
          </tbody>
        </table>
      ) : null}
      {people.error ? null : <Invite orgId={orgId} />}
    </section>
  );
};

type SsoForm = {
  configurationType: "discoveryURL" | "custom";
  discoveryURL: string;
  issuer: string;
  authorizationEndpoint: string;
  tokenEndpoint: string;
  jwksUri: string;
  userinfoEndpoint: string;
  clientId: string;
  clientSecret: string;
  allowedEmailDomains: string;
  isActive: boolean;
};

const formOf = (config: OidcConfig | null): SsoForm => ({
  configurationType: config?.configurationType === "custom" ? "custom" : "discoveryURL",
  discoveryURL: config?.discoveryURL ?? "",
  issuer: config?.issuer ?? "",
  authorizationEndpoint: config?.authorizationEndpoint ?? "",
  tokenEndpoint: config?.tokenEndpoint ?? "",
  jwksUri: config?.jwksUri ?? "",
  userinfoEndpoint: config?.userinfoEndpoint ?? "",
  clientId: config?.clientId ?? "",
  clientSecret: "",
  allowedEmailDomains: config?.allowedEmailDomains ?? "",
  isActive: config?.isActive ?? true,
});

const SsoSettingsForm = ({
  orgId,
  orgSlug,
  config,
  onSaved,
}: {
  orgId: string;
  orgSlug: string;
  config: OidcConfig | null;
  onSaved: () => void;
}) => {
  const client = useClient();
  const queryClient = useQueryClient();
  const [form, setForm] = useState<SsoForm>(() => formOf(config));
  const [errors, setErrors] = useState<FieldErrors>({});
  const set = <K extends keyof SsoForm>(key: K, value: SsoForm[K]) => setForm((f) => ({ ...f, [key]: value }));
  const save = useMutation({
    mutationFn: async (): Promise<OidcConfig | null> => {
      const { clientSecret, ...rest } = form;
      const endpoints =
        form.configurationType === "discoveryURL"
          ? { discoveryURL: form.discoveryURL }
          : {
              issuer: form.issuer,
              authorizationEndpoint: form.authorizationEndpoint,
              tokenEndpoint: form.tokenEndpoint,
              jwksUri: form.jwksUri,
              userinfoEndpoint: form.userinfoEndpoint,
            };
      const common = {
        organizationId: orgId,
        configurationType: form.configurationType,
        ...endpoints,
        clientId: rest.clientId,
        allowedEmailDomains: rest.allowedEmailDomains,
        isActive: rest.isActive,
      };
      if (config) {
        const checked = validate(contract.sso.updateOidcConfig.body, {
          ...common,
          ...(clientSecret ? { clientSecret } : {}),
        });
        setErrors(checked.errors ?? {});
        if (!checked.data) return null;
        return ok(client.sso.updateOidcConfig({ body: checked.data }));
      }
      const checked = validate(contract.sso.createOidcConfig.body, { ...common, clientSecret });
      setErrors(checked.errors ?? {});
      if (!checked.data) return null;
      return ok(client.sso.createOidcConfig({ body: checked.data }));
    },
    onSuccess: async (saved) => {
      if (!saved) return;
      onSaved();
      await queryClient.invalidateQueries({ queryKey: ["oidc-config", orgId] });
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    save.mutate();
  };
  const text = (key: Exclude<keyof SsoForm, "isActive" | "configurationType">, label: string, hint?: string) => (
    <Field
      label={label}
      value={form[key]}
      onChange={(e) => set(key, e.target.value)}
      error={errors[key]}
      hint={hint}
      autoComplete="off"
    />
  );
  return (
    <form className="card stack" onSubmit={submit} noValidate aria-label="Single sign-on settings">
      <p className="muted small">
        People sign in at <code>/login?org={orgSlug}</code> with your OpenID Connect provider. Register this redirect
        URI there: <code>{`${window.location.origin}/api/v1/sso/oidc/callback`}</code>
      </p>
      <SelectField
        label="Configuration"
        value={form.configurationType}
        onChange={(value) => set("configurationType", value === "custom" ? "custom" : "discoveryURL")}
        options={[
          { value: "discoveryURL", label: "Discovery URL" },
          { value: "custom", label: "Custom endpoints" },
        ]}
      />
      {form.configurationType === "discoveryURL" ? (
        text("discoveryURL", "Discovery URL", "The issuer; /.well-known/openid-configuration is read from it.")
      ) : (
        <>
          {text("issuer", "Issuer")}
          {text("authorizationEndpoint", "Authorization endpoint")}
          {text("tokenEndpoint", "Token endpoint")}
          {text("jwksUri", "JWKS URI")}
          {text("userinfoEndpoint", "Userinfo endpoint")}
        </>
      )}
      {text("clientId", "Client ID")}
      <Field
        label="Client secret"
        type="password"
        autoComplete="new-password"
        value={form.clientSecret}
        onChange={(e) => set("clientSecret", e.target.value)}
        error={errors.clientSecret}
        hint={config ? "Stored and never shown. Leave empty to keep it." : "Stored and never shown again."}
      />
      {text("allowedEmailDomains", "Allowed e-mail domains", "Comma-separated; empty allows any verified e-mail.")}
      <label className="check">
        <input type="checkbox" checked={form.isActive} onChange={(e) => set("isActive", e.target.checked)} /> Active
      </label>
      <ErrorBanner error={save.error ?? errors.organizationId} />
      <div className="form-actions">
        <Button type="submit" disabled={save.isPending}>
          {config ? "Save settings" : "Turn on single sign-on"}
        </Button>
      </div>
    </form>
  );
};

const SsoSettings = ({ orgId, orgSlug }: { orgId: string; orgSlug: string }) => {
  const client = useClient();
  const [saved, setSaved] = useState(false);
  const config = useQuery({
    queryKey: ["oidc-config", orgId],
    queryFn: async () => {
      try {
        return await ok(client.sso.getOidcConfig({ query: { organizationId: orgId } }));
      } catch (error) {
        // Not configured yet: the form starts empty.
        if (error instanceof KeywardError && error.status === 404) return null;
        throw error;
      }
    },
  });
  if (config.error) return <ErrorBanner error={config.error} />;
  if (config.data === undefined) return <Loading what="single sign-on settings" />;
  return (
    <section className="stack">
      <p>
        {config.data ? (
          config.data.isActive ? (
            <Badge tone="ok">on</Badge>
          ) : (
            <Badge tone="warn">off</Badge>
          )
        ) : (
          <Badge>not configured</Badge>
        )}
      </p>
      {saved ? (
        <div className="banner banner-info" role="status">
          Single sign-on settings saved.
        </div>
      ) : null}
      {/* Read back after each save: the form shows what is stored (the secret field starts empty again). */}
      <SsoSettingsForm
        key={config.data?.updatedAt ?? "new"}
        orgId={orgId}
        orgSlug={orgSlug}
        config={config.data}
        onSaved={() => setSaved(true)}
      />
    </section>
  );
};

/** The organization's people and its single sign-on, as far as the signed-in caller may see them. */
export const Organization = ({ tab }: { tab: string }) => {
  const organization = useOrganization();
  const org = organization.data;
  return (
    <section className="stack">
      <PageHeader title={org ? `Organization: ${org.name}` : "Organization"} />
      <nav className="tabs" aria-label="Organization sections">
        {TABS.map((t) => (
          <Link
            key={t.tab}
            href={t.tab === "people" ? "/organization" : `/organization/${t.tab}`}
            aria-current={tab === t.tab ? "page" : undefined}
          >
            {t.label}
          </Link>
        ))}
      </nav>
      <ErrorBanner error={organization.error} />
      {organization.isPending ? <Loading what="organization" /> : null}
      {org && tab === "people" ? <People orgId={org.id} /> : null}
      {org && tab === "sso" ? <SsoSettings orgId={org.id} orgSlug={org.slug} /> : null}
      {organization.data === null ? <Empty>You belong to no organization.</Empty> : null}
    </section>
  );
};
