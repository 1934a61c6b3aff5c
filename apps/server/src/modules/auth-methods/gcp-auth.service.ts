import type { RequestContext } from "../../context";
import { BadRequestError } from "../../errors";
import { authorizeAuthMethodOperation, mergeAuthConfigValues, toAuthConfigDto, toAuthConfigValues } from "./auth-config";
import type { AuthConfigRow } from "./auth-config.repository";
import { findGcpAuth, insertGcpAuth, updateGcpAuth, type GcpAuthRow } from "./gcp-auth.repository";
import { assertNotAttached, deleteMethodConfig, findMethodConfig, insertMethodConfig, updateMethodConfig, type MethodSpec } from "./method-config";
import type { CommonAttachInput, CommonUpdateInput } from "./method-inputs";

const SPEC: MethodSpec = { method: "gcp-auth", label: "gcp auth", duplicateMessage: "Failed to add GCP Auth to already configured identity" };

type GcpFields = { type: "iam" | "gce"; allowedServiceAccounts: string; allowedProjects: string; allowedZones: string };

const toDto = (config: AuthConfigRow, gcp: GcpAuthRow) => ({
  ...toAuthConfigDto(config),
  type: gcp.type as "iam" | "gce",
  allowedServiceAccounts: gcp.allowed_service_accounts,
  allowedProjects: gcp.allowed_projects,
  allowedZones: gcp.allowed_zones,
});

const requireConfig = async (ctx: RequestContext, identityId: string, message: string) => {
  const config = await findMethodConfig(ctx, identityId, SPEC);
  if (!config) throw new BadRequestError(message);
  return config;
};

export const attachGcpAuth = async (ctx: RequestContext, identityId: string, body: CommonAttachInput & GcpFields) => {
  const identity = await authorizeAuthMethodOperation(ctx, identityId, "attach", SPEC.label);
  const values = toAuthConfigValues(body);
  await assertNotAttached(ctx, identity.id, SPEC);
  const { config, extension } = await insertMethodConfig(ctx, identity.id, SPEC, values, (trx, configId) =>
    insertGcpAuth(trx, configId, {
      type: body.type,
      allowed_service_accounts: body.allowedServiceAccounts,
      allowed_projects: body.allowedProjects,
      allowed_zones: body.allowedZones,
    }),
  );
  return toDto(config, extension);
};

export const getGcpAuth = async (ctx: RequestContext, identityId: string) => {
  const identity = await authorizeAuthMethodOperation(ctx, identityId, "read", SPEC.label);
  const config = await requireConfig(ctx, identity.id, "The identity does not have GCP Auth attached");
  return toDto(config, await findGcpAuth(ctx.deps.db, config.id));
};

export const updateGcpAuthConfig = async (ctx: RequestContext, identityId: string, body: CommonUpdateInput & Partial<GcpFields>) => {
  const identity = await authorizeAuthMethodOperation(ctx, identityId, "update", SPEC.label);
  const current = await requireConfig(ctx, identity.id, "Failed to update GCP Auth");
  const values = mergeAuthConfigValues(current, body);
  const { config, extension } = await updateMethodConfig(ctx, current, values, (trx) =>
    updateGcpAuth(trx, current.id, {
      type: body.type,
      allowed_service_accounts: body.allowedServiceAccounts,
      allowed_projects: body.allowedProjects,
      allowed_zones: body.allowedZones,
    }),
  );
  return toDto(config, extension);
};

export const revokeGcpAuth = async (ctx: RequestContext, identityId: string) => {
  const identity = await authorizeAuthMethodOperation(ctx, identityId, "revoke", SPEC.label);
  const current = await requireConfig(ctx, identity.id, "The identity does not have gcp auth");
  const gcp = await findGcpAuth(ctx.deps.db, current.id);
  await deleteMethodConfig(ctx, current.id);
  return toDto(current, gcp);
};
