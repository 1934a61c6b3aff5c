import type { RequestContext } from "../../../context";
import { toAuthConfigDto } from "../shared/auth-config";
import type { AuthConfigRow } from "../shared/auth-config.repository";
import { findGcpAuth, insertGcpAuth, updateGcpAuth, type GcpAuthRow } from "./gcp-auth.repository";
import {
  authorizeMethodConfig,
  beginAttach,
  beginUpdate,
  insertMethodConfig,
  revokeMethodConfig,
  updateMethodConfig,
  type MethodSpec,
} from "../shared/method-config";
import type { CommonAttachInput, CommonUpdateInput } from "../shared/method-inputs";

const SPEC: MethodSpec = {
  method: "gcp-auth",
  label: "gcp auth",
  duplicateMessage: "Failed to add GCP Auth to already configured identity",
};

type GcpFields = { type: "iam" | "gce"; allowedServiceAccounts: string; allowedProjects: string; allowedZones: string };

const toDto = (config: AuthConfigRow, gcp: GcpAuthRow) => ({
  ...toAuthConfigDto(config),
  type: gcp.type as "iam" | "gce",
  allowedServiceAccounts: gcp.allowed_service_accounts,
  allowedProjects: gcp.allowed_projects,
  allowedZones: gcp.allowed_zones,
});

export const attachGcpAuth = async (ctx: RequestContext, identityId: string, body: CommonAttachInput & GcpFields) => {
  const attach = await beginAttach(ctx, identityId, SPEC, body);
  const { config, extension } = await insertMethodConfig(ctx, attach.identityId, SPEC, attach.values, (trx, configId) =>
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
  const config = await authorizeMethodConfig(
    ctx,
    identityId,
    "read",
    SPEC,
    "The identity does not have GCP Auth attached",
  );
  return toDto(config, await findGcpAuth(ctx.deps.db, config.id));
};

export const updateGcpAuthConfig = async (
  ctx: RequestContext,
  identityId: string,
  body: CommonUpdateInput & Partial<GcpFields>,
) => {
  const { current, values } = await beginUpdate(ctx, identityId, SPEC, "Failed to update GCP Auth", body);
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

export const revokeGcpAuth = (ctx: RequestContext, identityId: string) =>
  revokeMethodConfig(ctx, identityId, SPEC, "The identity does not have gcp auth", findGcpAuth, toDto);
