import { toAuthConfigDto } from "../shared/auth-config";
import { defineAuthMethod } from "../shared/define-auth-method";
import type { CommonAttachInput, CommonUpdateInput } from "../shared/method-inputs";
import { gcpAuthRows } from "./gcp-auth.repository";

type GcpFields = { type: "iam" | "gce"; allowedServiceAccounts: string; allowedProjects: string; allowedZones: string };

const toColumns = <B extends Partial<GcpFields>>(body: B) => ({
  type: body.type as B["type"],
  allowed_service_accounts: body.allowedServiceAccounts as B["allowedServiceAccounts"],
  allowed_projects: body.allowedProjects as B["allowedProjects"],
  allowed_zones: body.allowedZones as B["allowedZones"],
});

export const gcpAuth = defineAuthMethod<CommonAttachInput & GcpFields, CommonUpdateInput & Partial<GcpFields>>()({
  spec: {
    method: "gcp-auth",
    label: "gcp auth",
    duplicateMessage: "Failed to add GCP Auth to already configured identity",
  },
  rows: gcpAuthRows,
  missing: {
    get: "The identity does not have GCP Auth attached",
    update: "Failed to update GCP Auth",
    revoke: "The identity does not have gcp auth",
  },
  toDto: (config, gcp) => ({
    ...toAuthConfigDto(config),
    type: gcp.type as "iam" | "gce",
    allowedServiceAccounts: gcp.allowed_service_accounts,
    allowedProjects: gcp.allowed_projects,
    allowedZones: gcp.allowed_zones,
  }),
  attach: { row: (_ctx, body) => toColumns(body) },
  update: { row: (_ctx, body) => toColumns(body) },
});
