import type { RequestContext } from "../../../context";
import { toAuthConfigDto } from "../shared/auth-config";
import type { AuthConfigRow } from "../shared/auth-config.repository";
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
import { findAzureAuth, insertAzureAuth, updateAzureAuth, type AzureAuthRow } from "./azure-auth.repository";

const SPEC: MethodSpec = {
  method: "azure-auth",
  label: "azure auth",
  duplicateMessage: "Failed to add Azure Auth to already configured identity",
};

type AzureFields = { tenantId: string; resource: string; allowedServicePrincipalIds: string };

const toDto = (config: AuthConfigRow, azure: AzureAuthRow) => ({
  ...toAuthConfigDto(config),
  tenantId: azure.tenant_id,
  resource: azure.resource,
  allowedServicePrincipalIds: azure.allowed_service_principal_ids,
});

export const attachAzureAuth = async (
  ctx: RequestContext,
  identityId: string,
  body: CommonAttachInput & AzureFields,
) => {
  const attach = await beginAttach(ctx, identityId, SPEC, body);
  const { config, extension } = await insertMethodConfig(ctx, attach.identityId, SPEC, attach.values, (trx, configId) =>
    insertAzureAuth(trx, configId, {
      tenant_id: body.tenantId,
      resource: body.resource,
      allowed_service_principal_ids: body.allowedServicePrincipalIds,
    }),
  );
  return toDto(config, extension);
};

export const getAzureAuth = async (ctx: RequestContext, identityId: string) => {
  const config = await authorizeMethodConfig(
    ctx,
    identityId,
    "read",
    SPEC,
    "The identity does not have Azure Auth attached",
  );
  return toDto(config, await findAzureAuth(ctx.deps.db, config.id));
};

export const updateAzureAuthConfig = async (
  ctx: RequestContext,
  identityId: string,
  body: CommonUpdateInput & Partial<AzureFields>,
) => {
  const { current, values } = await beginUpdate(ctx, identityId, SPEC, "Failed to update Azure Auth", body);
  const { config, extension } = await updateMethodConfig(ctx, current, values, (trx) =>
    updateAzureAuth(trx, current.id, {
      tenant_id: body.tenantId,
      resource: body.resource,
      allowed_service_principal_ids: body.allowedServicePrincipalIds,
    }),
  );
  return toDto(config, extension);
};

export const revokeAzureAuth = (ctx: RequestContext, identityId: string) =>
  revokeMethodConfig(ctx, identityId, SPEC, "The identity does not have azure auth", findAzureAuth, toDto);
