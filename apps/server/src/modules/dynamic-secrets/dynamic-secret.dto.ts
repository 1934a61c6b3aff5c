import type { DynamicSecret, DynamicSecretLease } from "@keyward/contract";
import { toIso } from "../../lib/dates";
import type { DynamicSecretRow } from "./dynamic-secret.repository";
import type { LeaseRow } from "./lease.repository";

const metadataOf = (row: DynamicSecretRow) =>
  (Array.isArray(row.metadata) ? row.metadata : []).map(({ key, value }) => ({ key, value }));

export const toDynamicSecretDto = (row: DynamicSecretRow): DynamicSecret => ({
  id: row.id,
  name: row.name,
  version: row.version,
  type: row.type,
  defaultTTL: row.default_ttl,
  maxTTL: row.max_ttl,
  folderId: row.folder_id,
  status: row.status,
  statusDetails: row.status_details,
  usernameTemplate: row.username_template,
  projectGatewayId: null,
  gatewayId: null,
  gatewayV2Id: null,
  gatewayPoolId: null,
  metadata: metadataOf(row),
  createdAt: toIso(row.created_at),
  updatedAt: toIso(row.updated_at),
});

export const toLeaseDto = (row: LeaseRow): DynamicSecretLease => ({
  id: row.id,
  version: row.version,
  externalEntityId: row.external_entity_id,
  expireAt: toIso(row.expire_at),
  dynamicSecretId: row.dynamic_secret_id,
  status: row.status,
  statusDetails: row.status_details,
  config: row.config ?? null,
  createdAt: toIso(row.created_at),
  updatedAt: toIso(row.updated_at),
});

/** What object-level permission checks see of a dynamic secret. */
export const permissionObjectOf = (
  environment: string,
  secretPath: string,
  metadata?: { key: string; value: string }[],
) => ({
  environment,
  secretPath,
  ...(metadata ? { metadata: metadata.map(({ key, value }) => ({ key, value })) } : {}),
});
