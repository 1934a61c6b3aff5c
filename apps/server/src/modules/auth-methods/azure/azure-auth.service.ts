import { toAuthConfigDto } from "../shared/auth-config";
import { defineAuthMethod } from "../shared/define-auth-method";
import type { CommonAttachInput, CommonUpdateInput } from "../shared/method-inputs";
import { azureAuthRows } from "./azure-auth.repository";

type AzureFields = { tenantId: string; resource: string; allowedServicePrincipalIds: string };

const toColumns = <B extends Partial<AzureFields>>(body: B) => ({
  tenant_id: body.tenantId as B["tenantId"],
  resource: body.resource as B["resource"],
  allowed_service_principal_ids: body.allowedServicePrincipalIds as B["allowedServicePrincipalIds"],
});

export const azureAuth = defineAuthMethod<CommonAttachInput & AzureFields, CommonUpdateInput & Partial<AzureFields>>()({
  spec: {
    method: "azure-auth",
    label: "azure auth",
    duplicateMessage: "Failed to add Azure Auth to already configured identity",
  },
  rows: azureAuthRows,
  missing: {
    get: "The identity does not have Azure Auth attached",
    update: "Failed to update Azure Auth",
    revoke: "The identity does not have azure auth",
  },
  toDto: (config, azure) => ({
    ...toAuthConfigDto(config),
    tenantId: azure.tenant_id,
    resource: azure.resource,
    allowedServicePrincipalIds: azure.allowed_service_principal_ids,
  }),
  attach: { row: (_ctx, body) => toColumns(body) },
  update: { row: (_ctx, body) => toColumns(body) },
});
