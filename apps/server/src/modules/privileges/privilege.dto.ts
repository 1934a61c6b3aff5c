import type { PrivilegeDto } from "@keyward/contract";
import { toIso } from "../../lib/dates";
import type { PermissionRule } from "../../permissions";
import { toRuleDtos } from "../roles/role.dto";

type Row = {
  id: string;
  slug: string;
  membership_id: string;
  is_temporary: boolean;
  temporary_mode: string | null;
  temporary_range: string | null;
  temporary_access_start_time: Date | string | null;
  temporary_access_end_time: Date | string | null;
  permissions: unknown;
  created_at: Date | string;
  updated_at: Date | string;
};

/** v1 responses hide the subjects v1 clients never wrote themselves. */
const V1_HIDDEN_SUBJECTS: readonly string[] = ["dynamic-secrets", "secret-imports", "secret-folders"];

export const toPrivilegeDto = (row: Row, options: { v1?: boolean } = {}): PrivilegeDto => {
  const rules = row.permissions as PermissionRule[];
  return {
    id: row.id,
    slug: row.slug,
    projectMembershipId: row.membership_id,
    permissions: toRuleDtos(options.v1 ? rules.filter((r) => !V1_HIDDEN_SUBJECTS.includes(r.subject)) : rules),
    isTemporary: row.is_temporary,
    temporaryMode: row.temporary_mode,
    temporaryRange: row.temporary_range,
    temporaryAccessStartTime: toIso(row.temporary_access_start_time),
    temporaryAccessEndTime: toIso(row.temporary_access_end_time),
    createdAt: toIso(row.created_at),
    updatedAt: toIso(row.updated_at),
  };
};
