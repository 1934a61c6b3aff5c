import type { RequestContext } from "../../context";
import { NotFoundError } from "../../errors";
import { findProjectOfOrgBySlug, getProjectPermissionForRow } from "../authz/project-access";
import { lookupFolderByPath } from "../folders/folder.service";
import { findDynamicSecretByName } from "./dynamic-secret.repository";
import { providerOf } from "./providers";
import type { ProviderContext } from "./providers/types";

export type Scope = { projectSlug: string; environmentSlug: string; path: string };

/** The project by slug in the caller's organization, and the caller's ability there (secret-manager only). */
export const getDynamicSecretProjectPermission = async (ctx: RequestContext, projectSlug: string) => {
  const project = await findProjectOfOrgBySlug(ctx.deps.db, ctx.actor.orgId, projectSlug);
  // Another organization's project is indistinguishable from a missing one.
  if (!project) throw new NotFoundError(`Project with slug '${projectSlug}' not found`);
  return getProjectPermissionForRow(ctx, project, "secret-manager");
};

/** Dynamic-secret routes word this 404 one way, lease routes another (reference). */
export const folderNotFound = {
  secret: (scope: Scope) => `Folder with path '${scope.path}' in environment '${scope.environmentSlug}' not found`,
  lease: (scope: Scope) =>
    `Folder with path '${scope.path}' in environment with slug '${scope.environmentSlug}' not found`,
};

export const requireFolder = async (
  ctx: RequestContext,
  projectId: string,
  scope: Scope,
  message: (scope: Scope) => string,
) => {
  const found = await lookupFolderByPath(ctx.deps.db, projectId, scope.environmentSlug, scope.path);
  if (!found) throw new NotFoundError(message(scope));
  return found.folder;
};

export const requireDynamicSecret = async (ctx: RequestContext, folderId: string, name: string, message: string) => {
  const secret = await findDynamicSecretByName(ctx.deps.db, folderId, name);
  if (!secret) throw new NotFoundError(message);
  return secret;
};

/** Decrypt a secret's root inputs; the row id is bound into the ciphertext. */
export const decryptInputs = (ctx: { deps: RequestContext["deps"] }, dynamicSecretId: string, encrypted: string) =>
  JSON.parse(ctx.deps.secretBox.decrypt(encrypted, `dynamic-secret:${dynamicSecretId}`)) as unknown;

export const encryptInputs = (ctx: { deps: RequestContext["deps"] }, dynamicSecretId: string, inputs: unknown) =>
  ctx.deps.secretBox.encrypt(JSON.stringify(inputs), `dynamic-secret:${dynamicSecretId}`);

export const providerContext = (deps: RequestContext["deps"]): ProviderContext => ({
  outbound: deps.env.ALLOW_PRIVATE_OUTBOUND,
  deadlineMs: deps.env.CONNECTOR_DEADLINE_MS,
  pools: deps.targetPools,
});

export { providerOf };
