import { useId, useState, type FormEvent } from "react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { contract, type ChangeRequest } from "@keyward/contract";
import { ok } from "@keyward/client";
import { useClient } from "../session";
import { Badge, Button, Dialog, Empty, ErrorBanner, Field, Loading, formatDate } from "../ui/components";
import { validate, type FieldErrors } from "../ui/form";
import { SecretValue } from "../ui/secret-value";
import type { Scope, Secret } from "./types";

const TextArea = ({
  label,
  value,
  onChange,
  error,
}: {
  label: string;
  value: string;
  onChange: (value: string) => void;
  error?: string;
}) => {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <textarea id={id} rows={3} value={value} onChange={(e) => onChange(e.target.value)} aria-invalid={!!error} />
      {error ? <small className="field-error">{error}</small> : null}
    </div>
  );
};

/**
 * Create a secret, or edit the value and comment of one. In a protected folder the server writes nothing and
 * opens a change request instead: `onChangeRequest` hears of it.
 */
export const SecretEditor = ({
  scope,
  secret,
  onClose,
  onChangeRequest,
}: {
  scope: Scope;
  secret?: Secret;
  onClose: () => void;
  onChangeRequest: (request: ChangeRequest) => void;
}) => {
  const client = useClient();
  const queryClient = useQueryClient();
  const [key, setKey] = useState(secret?.secretKey ?? "");
  const [value, setValue] = useState(secret?.secretValue ?? "");
  const [comment, setComment] = useState(secret?.secretComment ?? "");
  const [errors, setErrors] = useState<FieldErrors>({});
  const where = { workspaceId: scope.projectId, environment: scope.environment, secretPath: scope.path };
  const save = useMutation({
    mutationFn: async () => {
      if (secret) {
        const checked = validate(contract.secretsV3.update.body, {
          ...where,
          secretValue: value,
          secretComment: comment,
        });
        if (checked.errors) throw Object.assign(new Error("Check the highlighted fields"), { fields: checked.errors });
        return ok(client.secretsV3.update({ params: { secretName: secret.secretKey }, body: checked.data }));
      }
      const name = validate(contract.secretsV3.create.pathParams, { secretName: key });
      const body = validate(contract.secretsV3.create.body, { ...where, secretValue: value, secretComment: comment });
      const fields = { ...(name.errors ?? {}), ...(body.errors ?? {}) };
      if (!name.data || !body.data) throw Object.assign(new Error("Check the highlighted fields"), { fields });
      return ok(client.secretsV3.create({ params: name.data, body: body.data }));
    },
    onMutate: () => setErrors({}),
    onError: (error) => setErrors((error as { fields?: FieldErrors }).fields ?? {}),
    onSuccess: async (result) => {
      if ("approval" in result) {
        onChangeRequest(result.approval);
        await queryClient.invalidateQueries({ queryKey: ["change-requests", scope.projectId] });
      } else await queryClient.invalidateQueries({ queryKey: ["secrets"] });
      onClose();
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    save.mutate();
  };
  return (
    <Dialog title={secret ? `Edit ${secret.secretKey}` : "Add secret"} onClose={onClose}>
      <form onSubmit={submit} noValidate>
        <Field
          label="Key"
          value={key}
          onChange={(e) => setKey(e.target.value)}
          error={errors.secretName}
          disabled={!!secret}
          autoFocus={!secret}
        />
        <TextArea label="Value" value={value} onChange={setValue} error={errors.secretValue} />
        <Field
          label="Comment"
          value={comment}
          onChange={(e) => setComment(e.target.value)}
          error={errors.secretComment}
        />
        <ErrorBanner error={save.error} />
        <div className="form-actions">
          <Button type="submit" disabled={save.isPending}>
            {secret ? "Save" : "Create secret"}
          </Button>
        </div>
      </form>
    </Dialog>
  );
};

/** Every recorded version, newest first; any older one can be restored (as a new version). */
export const SecretVersions = ({ secret, onClose }: { secret: Secret; onClose: () => void }) => {
  const client = useClient();
  const queryClient = useQueryClient();
  const versions = useQuery({
    queryKey: ["secret-versions", secret.id],
    queryFn: () =>
      ok(client.secretVersions.list({ params: { secretId: secret.id }, query: { offset: 0, limit: 100 } })),
  });
  const rollback = useMutation({
    mutationFn: (version: number) =>
      ok(client.secretVersions.rollback({ params: { secretId: secret.id, version }, body: {} })),
    onSuccess: async () => {
      await queryClient.invalidateQueries({ queryKey: ["secrets"] });
      await queryClient.invalidateQueries({ queryKey: ["secret-versions", secret.id] });
    },
  });
  const list = versions.data?.secretVersions ?? [];
  const newest = list[0]?.version;
  return (
    <Dialog title={`Versions of ${secret.secretKey}`} onClose={onClose}>
      <ErrorBanner error={versions.error ?? rollback.error} />
      {versions.isPending ? <Loading what="versions" /> : null}
      {versions.data && list.length === 0 ? <Empty>No versions recorded.</Empty> : null}
      <ol className="versions">
        {list.map((v) => (
          <li key={v.id}>
            <div>
              <strong>v{v.version}</strong> {v.version === newest ? <Badge tone="ok">current</Badge> : null}{" "}
              {v.isDeleted ? <Badge tone="bad">deleted</Badge> : null}
              <span className="muted small"> {formatDate(v.createdAt)}</span>
            </div>
            <div>
              {v.secretKey} = <SecretValue value={v.secretValue} hidden={v.secretValueHidden} name={`v${v.version}`} />
            </div>
            {v.version !== newest ? (
              <Button variant="secondary" disabled={rollback.isPending} onClick={() => rollback.mutate(v.version)}>
                Roll back to v{v.version}
              </Button>
            ) : null}
          </li>
        ))}
      </ol>
    </Dialog>
  );
};
