import { useId, useState } from "react";
import { useMutation, useQueryClient } from "@tanstack/react-query";
import { MAX_SECRETS_PER_BATCH, type ChangeRequest } from "@keyward/contract";
import { ok } from "@keyward/client";
import { useClient } from "../session";
import { Badge, Button, Dialog, ErrorBanner, TableHead } from "../ui/components";
import { saveFile } from "../ui/download";
import { parseSecretsText, toDotenv } from "./secret-text";
import type { Scope, Secret } from "./types";

type Step = { key: string; value: string; action: "create" | "overwrite" | "unchanged" };

/** What importing `entries` does to the folder as listed: new keys, changed values, and values already there. */
const stepsOf = (entries: readonly [string, string][], current: readonly Secret[]): Step[] => {
  const existing = new Map(current.map((s) => [s.secretKey, s]));
  return entries.map(([key, value]) => {
    const secret = existing.get(key);
    const action = !secret
      ? "create"
      : !secret.secretValueHidden && secret.secretValue === value
        ? "unchanged"
        : "overwrite";
    return { key, value, action };
  });
};

const TONE = { create: "ok", overwrite: "warn", unchanged: "neutral" } as const;

/**
 * Paste (or pick a file of) `.env`, JSON or YAML, see what would be created or overwritten, then write it
 * in one all-or-nothing batch (in a protected folder, one change request). Nothing is sent before the preview.
 */
export const PasteImport = ({
  scope,
  current,
  onClose,
  onChangeRequest,
}: {
  scope: Scope;
  current: readonly Secret[];
  onClose: () => void;
  onChangeRequest: (request: ChangeRequest) => void;
}) => {
  const client = useClient();
  const queryClient = useQueryClient();
  const textId = useId();
  const fileId = useId();
  const [text, setText] = useState("");
  const parsed = text.trim() === "" ? undefined : parseSecretsText(text);
  const steps = parsed ? stepsOf(parsed.entries, current) : [];
  const writes = steps.filter((s) => s.action !== "unchanged");
  const tooMany = writes.length > MAX_SECRETS_PER_BATCH;
  const save = useMutation({
    mutationFn: () =>
      ok(
        client.secretsV3.batchUpdate({
          body: {
            workspaceId: scope.projectId,
            environment: scope.environment,
            secretPath: scope.path,
            mode: "upsert",
            secrets: writes.map((s) => ({ secretKey: s.key, secretValue: s.value })),
          },
        }),
      ),
    onSuccess: async (result) => {
      if ("approval" in result) onChangeRequest(result.approval);
      await queryClient.invalidateQueries({ queryKey: ["secrets"] });
      onClose();
    },
  });
  return (
    <Dialog title={`Import secrets into ${scope.environment} ${scope.path}`} onClose={onClose}>
      <div className="field">
        <label htmlFor={textId}>.env, JSON or YAML</label>
        <textarea
          id={textId}
          rows={8}
          value={text}
          onChange={(e) => setText(e.target.value)}
          placeholder={"DATABASE_URL=postgres://…\nAPI_KEY=…"}
          spellCheck={false}
        />
      </div>
      <div className="field">
        <label htmlFor={fileId}>Or a file</label>
        <input
          id={fileId}
          type="file"
          accept=".env,.json,.yaml,.yml,text/plain,application/json"
          onChange={(e) => void e.target.files?.[0]?.text().then(setText)}
        />
      </div>
      {parsed ? (
        <>
          <p className="muted small" role="status">
            Read as {parsed.format === "env" ? ".env" : parsed.format.toUpperCase()}: {steps.length} keys,{" "}
            {steps.filter((s) => s.action === "create").length} to create,{" "}
            {steps.filter((s) => s.action === "overwrite").length} to overwrite.
          </p>
          {parsed.problems.length > 0 ? (
            <ul className="banner banner-warning" aria-label="Problems in the text">
              {parsed.problems.map((problem) => (
                <li key={problem}>{problem}</li>
              ))}
            </ul>
          ) : null}
          {steps.length > 0 ? (
            <table className="table" aria-label="Import preview">
              <TableHead columns={["Key", "What happens"]} />
              <tbody>
                {steps.map((s) => (
                  <tr key={s.key}>
                    <th scope="row">
                      <code>{s.key}</code>
                    </th>
                    <td>
                      <Badge tone={TONE[s.action]}>{s.action}</Badge>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          ) : null}
        </>
      ) : null}
      {tooMany ? (
        <p className="banner banner-error" role="alert">
          At most {MAX_SECRETS_PER_BATCH} secrets per import; split the text.
        </p>
      ) : null}
      <ErrorBanner error={save.error} />
      <div className="form-actions">
        <Button disabled={writes.length === 0 || tooMany || save.isPending} onClick={() => save.mutate()}>
          {writes.length === 0 ? "Nothing to import" : `Import ${writes.length} secrets`}
        </Button>
      </div>
    </Dialog>
  );
};

/** Saves the folder's readable secrets as `<environment><path>.env` (hidden values are named, not exported). */
export const downloadDotenv = (scope: Scope, secrets: readonly Secret[]) => {
  const text = toDotenv(secrets.map((s) => ({ key: s.secretKey, value: s.secretValue, hidden: s.secretValueHidden })));
  saveFile(`${[scope.environment, ...scope.path.split("/").filter(Boolean)].join("-")}.env`, text);
};
