import { useState, type FormEvent } from "react";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { ChangeRequest } from "@keyward/contract";
import { ok } from "@keyward/client";
import { useClient } from "../session";
import { Button, ErrorBanner } from "../ui/components";
import { permissionsOf, type Permissions } from "../ui/permissions";
import type { Scope, Secret } from "./types";

/** The caller's own rules in a project (undefined while they load, or if the server would not say). */
export const useMyPermissions = (projectId: string): Permissions | undefined => {
  const client = useClient();
  const permissions = useQuery({
    queryKey: ["my-permissions", projectId],
    queryFn: async () =>
      permissionsOf((await ok(client.projects.myPermissions({ params: { projectId } }))).data.permissions),
    retry: false,
  });
  return permissions.data;
};

/**
 * What the caller may do with a key in one environment, from their own rules (every action allowed
 * while those are unknown: the server decides anyway). `see` false on a key the list lacks means the
 * caller could not see it there, not that it is missing.
 */
export const rightsAt = (may: Permissions | undefined, scope: Scope, secretKey: string, secret?: Secret) => {
  const object = {
    environment: scope.environment,
    secretPath: scope.path,
    secretName: secretKey,
    secretTags: secret?.tags.map((t) => t.slug) ?? [],
  };
  const can = (action: string) => may?.can(action, "secrets", object) ?? true;
  return { see: can("describeSecret") || can("read"), create: can("create"), edit: can("edit"), delete: can("delete") };
};

/** One cell edited in place: the value typed, saved as an update (or a create where the key is missing). */
export const CellEditor = ({
  scope,
  secretKey,
  secret,
  onDone,
  onChangeRequest,
}: {
  scope: Scope;
  secretKey: string;
  secret?: Secret;
  onDone: () => void;
  onChangeRequest: (request: ChangeRequest) => void;
}) => {
  const client = useClient();
  const queryClient = useQueryClient();
  const [value, setValue] = useState(secret && !secret.secretValueHidden ? secret.secretValue : "");
  const save = useMutation({
    mutationFn: () => {
      const body = {
        workspaceId: scope.projectId,
        environment: scope.environment,
        secretPath: scope.path,
        secretValue: value,
      };
      const params = { secretName: secretKey };
      return ok(secret ? client.secretsV3.update({ params, body }) : client.secretsV3.create({ params, body }));
    },
    onSuccess: async (result) => {
      if ("approval" in result) onChangeRequest(result.approval);
      await queryClient.invalidateQueries({ queryKey: ["secrets"] });
      onDone();
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    save.mutate();
  };
  return (
    <form className="cell-editor" onSubmit={submit}>
      <input
        aria-label={`Value of ${secretKey} in ${scope.environment}`}
        value={value}
        onChange={(e) => setValue(e.target.value)}
        autoFocus
      />
      <Button type="submit" disabled={save.isPending}>
        Save
      </Button>
      <Button variant="ghost" onClick={onDone}>
        Cancel
      </Button>
      <ErrorBanner error={save.error} />
    </form>
  );
};
