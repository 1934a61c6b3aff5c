import type { Identity } from "@keyward/contract";
import { toIso } from "../../lib/dates";
import type { IdentityDetailsRow } from "./identity.repository";

export const toIdentityDto = (
  row: IdentityDetailsRow,
  activeLockoutAuthMethods: string[] = row.active_lockout_auth_methods,
): Identity => ({
  id: row.id,
  name: row.name,
  orgId: row.org_id,
  projectId: row.project_id,
  role: row.org_role,
  hasDeleteProtection: row.has_delete_protection,
  authMethods: row.auth_methods,
  activeLockoutAuthMethods,
  metadata: row.metadata,
  createdAt: toIso(row.created_at),
  updatedAt: toIso(row.updated_at),
});
