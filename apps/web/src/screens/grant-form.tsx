import { useState, type FormEvent } from "react";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { contract, PROJECT_PERMISSION_CATALOG } from "@keyward/contract";
import { ok, type KeywardClient } from "@keyward/client";
import { useClient } from "../session";
import { Button, ErrorBanner, Field, SelectField } from "../ui/components";
import { validate, type FieldErrors } from "../ui/form";

// The checked rule is any catalog subject; the client's type narrows each subject to its own actions.
type GrantBody = Parameters<KeywardClient["privileges"]["v2"]["create"]>[0]["body"];

type Member = { identityId: string; identity: { name: string } };

const SUBJECTS = Object.keys(PROJECT_PERMISSION_CATALOG) as (keyof typeof PROJECT_PERMISSION_CATALOG)[];

/** Grant an additional privilege (one rule), permanent or temporary from now for a range. */
export const GrantForm = ({ projectId, members }: { projectId: string; members: Member[] }) => {
  const client = useClient();
  const queryClient = useQueryClient();
  const [identityId, setIdentityId] = useState(members[0]?.identityId ?? "");
  const [slug, setSlug] = useState("");
  const [subject, setSubject] = useState<string>("secrets");
  const [action, setAction] = useState("read");
  const [temporary, setTemporary] = useState(true);
  const [range, setRange] = useState("1h");
  const [errors, setErrors] = useState<FieldErrors>({});
  const actions = (PROJECT_PERMISSION_CATALOG[subject as keyof typeof PROJECT_PERMISSION_CATALOG] ??
    []) as readonly string[];
  const grant = useMutation({
    mutationFn: (body: GrantBody) => ok(client.privileges.v2.create({ body })),
    onSuccess: async () => {
      setSlug("");
      await queryClient.invalidateQueries({ queryKey: ["privileges", projectId] });
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const checked = validate(contract.privileges.v2.create.body, {
      identityId,
      projectId,
      slug: slug || undefined,
      permissions: [{ subject, action: [action] }],
      type: temporary
        ? {
            isTemporary: true,
            temporaryMode: "relative",
            temporaryRange: range,
            temporaryAccessStartTime: new Date().toISOString(),
          }
        : { isTemporary: false },
    });
    setErrors(checked.errors ?? {});
    if (checked.data) grant.mutate(checked.data as GrantBody);
  };
  return (
    <form className="card" onSubmit={submit} noValidate aria-labelledby="grant-title">
      <h2 id="grant-title">Grant a privilege</h2>
      <div className="row">
        <SelectField
          label="Identity"
          value={identityId}
          onChange={setIdentityId}
          options={members.map((m) => ({ value: m.identityId, label: m.identity.name }))}
        />
        <Field label="Slug (optional)" value={slug} onChange={(e) => setSlug(e.target.value)} error={errors.slug} />
        <SelectField
          label="Subject"
          value={subject}
          onChange={(value) => {
            setSubject(value);
            setAction(
              (PROJECT_PERMISSION_CATALOG[value as keyof typeof PROJECT_PERMISSION_CATALOG] as readonly string[])[0] ??
                "read",
            );
          }}
          options={SUBJECTS.map((s) => ({ value: s, label: s }))}
        />
        <SelectField
          label="Action"
          value={action}
          onChange={setAction}
          options={actions.map((a) => ({ value: a, label: a }))}
        />
      </div>
      <div className="row">
        <label className="check">
          <input type="checkbox" checked={temporary} onChange={(e) => setTemporary(e.target.checked)} /> Temporary,
          starting now
        </label>
        {temporary ? (
          <Field
            label="For (e.g. 30m, 1h, 7d)"
            value={range}
            onChange={(e) => setRange(e.target.value)}
            error={errors.type}
          />
        ) : null}
      </div>
      {errors.permissions || errors.identityId ? <ErrorBanner error={errors.permissions ?? errors.identityId} /> : null}
      <ErrorBanner error={grant.error} />
      <Button type="submit" disabled={grant.isPending}>
        Grant
      </Button>
    </form>
  );
};
