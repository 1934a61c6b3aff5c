import type { LegacyPermission, PrivilegePermission } from "@keyward/contract";
import type { Conditions, PermissionRule } from "../../permissions";

type LegacyConditions = LegacyPermission["conditions"];

const toConditions = (conditions: LegacyConditions): Conditions | undefined => {
  if (!conditions) return undefined;
  const out: Conditions = {};
  if (conditions.environment !== undefined) out.environment = conditions.environment;
  if (conditions.secretPath !== undefined) out.secretPath = conditions.secretPath;
  return Object.keys(out).length > 0 ? out : undefined;
};

const rule = (subject: string, action: string[], conditions: Conditions | undefined): PermissionRule => ({
  subject,
  action: [...new Set(action)],
  inverted: false,
  ...(conditions ? { conditions } : {}),
});

const DYNAMIC_SECRET_ACTIONS: Record<string, string[]> = {
  read: ["read-root-credential"],
  create: ["create-root-credential"],
  edit: ["edit-root-credential", "lease"],
  delete: ["delete-root-credential"],
};

/**
 * A v1 secrets rule also meant the neighbouring subjects of today's catalogue:
 * `read` implies `readValue`; imports follow the same actions, folders the non-read ones (unless
 * folder rules were given), and dynamic secrets the matching root-credential actions.
 */
const backfill = (rules: PermissionRule[]): PermissionRule[] => {
  const hasFolderRules = rules.some((r) => r.subject === "secret-folders");
  const out: PermissionRule[] = [];
  const extra: PermissionRule[] = [];
  for (const r of rules) {
    if (r.subject !== "secrets") {
      out.push(r);
      continue;
    }
    out.push(r.action.includes("read") ? rule("secrets", [...r.action, "readValue"], r.conditions) : r);
    extra.push(rule("secret-imports", r.action, r.conditions));
    const folderActions = r.action.filter((a) => a !== "read");
    if (!hasFolderRules && folderActions.length > 0) extra.push(rule("secret-folders", folderActions, r.conditions));
    extra.push(
      rule(
        "dynamic-secrets",
        r.action.flatMap((a) => DYNAMIC_SECRET_ACTIONS[a] ?? []),
        r.conditions,
      ),
    );
  }
  return [...out, ...extra];
};

/**
 * v1 inputs as rules: `privilegePermission` wins over the deprecated `permissions`; undefined when
 * neither is given.
 */
export const expandLegacyPermissions = (input: {
  permissions?: LegacyPermission[];
  privilegePermission?: PrivilegePermission;
}): PermissionRule[] | undefined => {
  if (input.privilegePermission) {
    const { actions, conditions } = input.privilegePermission;
    return backfill(actions.map((action) => rule("secrets", [action], toConditions(conditions))));
  }
  if (input.permissions)
    return backfill(input.permissions.map((p) => rule(p.subject, [p.action], toConditions(p.conditions))));
  return undefined;
};
