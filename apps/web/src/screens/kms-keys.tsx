import { useState, type FormEvent } from "react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import {
  ASYMMETRIC_KMS_ALGORITHMS,
  KMS_KEY_USAGES,
  SYMMETRIC_KMS_ALGORITHMS,
  contract,
  type KmsKey,
} from "@keyward/contract";
import { ok } from "@keyward/client";
import { useClient } from "../session";
import { Badge, Button, Empty, ErrorBanner, Field, Loading, SelectField, TableHead } from "../ui/components";
import { validate, type FieldErrors } from "../ui/form";
import type { Project } from "./types";

/** UTF-8 text as the base64 the KMS routes take, and back. */
const toBase64 = (text: string) => btoa(String.fromCharCode(...new TextEncoder().encode(text)));
const fromBase64 = (data: string) => new TextDecoder().decode(Uint8Array.from(atob(data), (c) => c.charCodeAt(0)));

const CreateKey = ({ projectId }: { projectId: string }) => {
  const client = useClient();
  const queryClient = useQueryClient();
  const [name, setName] = useState("");
  const [usage, setUsage] = useState<(typeof KMS_KEY_USAGES)[number]>("encrypt-decrypt");
  const algorithms = usage === "encrypt-decrypt" ? SYMMETRIC_KMS_ALGORITHMS : ASYMMETRIC_KMS_ALGORITHMS;
  const [algorithm, setAlgorithm] = useState<string>(algorithms[0]);
  const [errors, setErrors] = useState<FieldErrors>({});
  const create = useMutation({
    mutationFn: (body: typeof contract.kms.create.body._output) => ok(client.kms.create({ body })),
    onSuccess: async () => {
      setName("");
      await queryClient.invalidateQueries({ queryKey: ["kms-keys", projectId] });
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const checked = validate(contract.kms.create.body, {
      projectId,
      name,
      keyUsage: usage,
      encryptionAlgorithm: algorithm,
    });
    setErrors(checked.errors ?? {});
    if (checked.data) create.mutate(checked.data);
  };
  return (
    <form className="card row" onSubmit={submit} noValidate aria-label="Create a key">
      <Field label="Key name" value={name} onChange={(e) => setName(e.target.value)} error={errors.name} />
      <SelectField
        label="Usage"
        value={usage}
        onChange={(value) => {
          const next = value as typeof usage;
          setUsage(next);
          setAlgorithm((next === "encrypt-decrypt" ? SYMMETRIC_KMS_ALGORITHMS : ASYMMETRIC_KMS_ALGORITHMS)[0]);
        }}
        options={KMS_KEY_USAGES.map((u) => ({ value: u, label: u }))}
      />
      <SelectField
        label="Algorithm"
        value={algorithm}
        onChange={setAlgorithm}
        options={algorithms.map((a) => ({ value: a, label: a }))}
      />
      <Button type="submit" disabled={create.isPending}>
        Create key
      </Button>
      <ErrorBanner error={create.error} />
    </form>
  );
};

/** Encrypt a short text with the key and decrypt the answer: a check that the key works, nothing kept. */
const TryKey = ({ keyId, name }: { keyId: string; name: string }) => {
  const client = useClient();
  const [text, setText] = useState("");
  const [ciphertext, setCiphertext] = useState("");
  const encrypt = useMutation({
    mutationFn: () => ok(client.kms.encrypt({ params: { keyId }, body: { plaintext: toBase64(text) } })),
    onSuccess: (result) => setCiphertext(result.ciphertext),
  });
  const decrypt = useMutation({
    mutationFn: () => ok(client.kms.decrypt({ params: { keyId }, body: { ciphertext } })),
  });
  return (
    <div className="stack" role="group" aria-label={`Try ${name}`}>
      <div className="row">
        <Field label="Text to encrypt" value={text} onChange={(e) => setText(e.target.value)} />
        <Button variant="secondary" disabled={encrypt.isPending} onClick={() => encrypt.mutate()}>
          Encrypt
        </Button>
      </div>
      {ciphertext ? (
        <div className="row">
          <Field label="Ciphertext" value={ciphertext} onChange={(e) => setCiphertext(e.target.value)} />
          <Button variant="secondary" disabled={decrypt.isPending} onClick={() => decrypt.mutate()}>
            Decrypt
          </Button>
        </div>
      ) : null}
      {decrypt.data ? (
        <p role="status">
          Decrypted: <code>{fromBase64(decrypt.data.plaintext)}</code>
        </p>
      ) : null}
      <ErrorBanner error={encrypt.error ?? decrypt.error} />
    </div>
  );
};

const KeyRow = ({ kmsKey, projectId }: { kmsKey: KmsKey; projectId: string }) => {
  const client = useClient();
  const queryClient = useQueryClient();
  const [trying, setTrying] = useState(false);
  const refresh = () => queryClient.invalidateQueries({ queryKey: ["kms-keys", projectId] });
  const update = useMutation({
    mutationFn: (isDisabled: boolean) => ok(client.kms.update({ params: { keyId: kmsKey.id }, body: { isDisabled } })),
    onSuccess: refresh,
  });
  const rotate = useMutation({
    mutationFn: () => ok(client.kms.rotate({ params: { keyId: kmsKey.id }, body: {} })),
    onSuccess: refresh,
  });
  const remove = useMutation({
    mutationFn: () => ok(client.kms.delete({ params: { keyId: kmsKey.id } })),
    onSuccess: refresh,
  });
  const named = <span className="sr-only"> {kmsKey.name}</span>;
  return (
    <>
      <tr>
        <th scope="row">
          <code>{kmsKey.name}</code>
        </th>
        <td>{kmsKey.keyUsage}</td>
        <td>{kmsKey.encryptionAlgorithm}</td>
        <td>v{kmsKey.version}</td>
        <td>{kmsKey.isDisabled ? <Badge tone="bad">disabled</Badge> : <Badge tone="ok">enabled</Badge>}</td>
        <td className="actions">
          {kmsKey.keyUsage === "encrypt-decrypt" ? (
            <Button variant="secondary" aria-expanded={trying} onClick={() => setTrying(!trying)}>
              Try{named}
            </Button>
          ) : null}
          <Button variant="secondary" disabled={update.isPending} onClick={() => update.mutate(!kmsKey.isDisabled)}>
            {kmsKey.isDisabled ? "Enable" : "Disable"}
            {named}
          </Button>
          <Button variant="secondary" disabled={rotate.isPending} onClick={() => rotate.mutate()}>
            Rotate{named}
          </Button>
          <Button
            variant="danger"
            disabled={remove.isPending}
            onClick={() => {
              if (
                window.confirm(
                  `Delete ${kmsKey.name} and every version of it? Its ciphertexts can no longer be decrypted.`,
                )
              )
                remove.mutate();
            }}
          >
            Delete{named}
          </Button>
          <ErrorBanner error={update.error ?? rotate.error ?? remove.error} />
        </td>
      </tr>
      {trying ? (
        <tr>
          <td colSpan={6}>
            <TryKey keyId={kmsKey.id} name={kmsKey.name} />
          </td>
        </tr>
      ) : null}
    </>
  );
};

/** A KMS project's keys: create, try (encrypt then decrypt a text), disable or enable, rotate, delete. */
export const KmsKeys = ({ project }: { project: Project }) => {
  const client = useClient();
  const keys = useQuery({
    queryKey: ["kms-keys", project.id],
    queryFn: () => ok(client.kms.list({ query: { projectId: project.id, limit: 100 } })),
  });
  const list = keys.data?.keys ?? [];
  return (
    <div className="stack">
      <CreateKey projectId={project.id} />
      <ErrorBanner error={keys.error} />
      {keys.isPending ? <Loading what="keys" /> : null}
      {keys.data && list.length === 0 ? <Empty>No keys in this project yet.</Empty> : null}
      {keys.data && keys.data.totalCount > list.length ? (
        <p className="muted small">
          The first {list.length} of {keys.data.totalCount} keys, by name.
        </p>
      ) : null}
      {list.length > 0 ? (
        <table className="table" aria-label="Keys">
          <TableHead columns={["Name", "Usage", "Algorithm", "Version", "Status"]} actions />
          <tbody>
            {list.map((k) => (
              <KeyRow key={k.id} kmsKey={k} projectId={project.id} />
            ))}
          </tbody>
        </table>
      ) : null}
    </div>
  );
};
