import { ORG_PERMISSION_CATALOG, PROJECT_PERMISSION_CATALOG } from "@keyward/contract";
import { buildAbility, type Ability } from "./ability";
import { missingPermissions } from "./boundary";
import type { PermissionRule } from "./types";

const all = (catalog: Record<string, readonly string[]>): PermissionRule[] =>
  Object.entries(catalog).map(([subject, actions]) => ({ subject, action: [...actions], inverted: false }));

const allow = (subject: string, ...action: string[]): PermissionRule => ({ subject, action, inverted: false });
const CRUD = ["read", "create", "edit", "delete"];

const PROJECT_MEMBER: PermissionRule[] = [
  allow("secrets", "read", "describeSecret", "readValue", "create", "edit", "delete"),
  allow("secret-folders", ...CRUD),
  allow("secret-imports", ...CRUD),
  allow(
    "dynamic-secrets",
    "read-root-credential",
    "create-root-credential",
    "edit-root-credential",
    "delete-root-credential",
    "lease",
  ),
  allow("secret-rollback", "read", "create"),
  allow("secret-approval", "read"),
  allow("secret-rotation", "read", "read-generated-credentials", "create", "edit", "delete", "rotate-secrets"),
  allow("commits", "read", "perform-rollback"),
  allow("member", "read"),
  allow("groups", "read"),
  allow("role", "read"),
  allow("integrations", ...CRUD),
  allow("webhooks", ...CRUD),
  allow("identity", "read", "create", "edit", "delete"),
  allow("service-tokens", ...CRUD),
  allow("settings", "read"),
  allow("environments", ...CRUD),
  allow("tags", ...CRUD),
  allow("audit-logs", "read"),
  allow("ip-allowlist", "read"),
  allow("certificate-authorities", "read"),
  allow("certificates", "read", "create", "edit", "delete"),
  allow("certificate-templates", "read"),
  allow("certificate-profiles", "read", "issue-cert"),
  allow("certificate-policies", "read"),
  allow("pki-alerts", ...CRUD),
  allow("pki-collections", ...CRUD),
  allow("pki-subscribers", "read", "issue-cert", "list-certs"),
  allow("ssh-certificates", "read", "create"),
  allow("ssh-certificate-templates", "read"),
  allow("ssh-hosts", "read"),
  allow("cmek", ...CRUD, "encrypt", "decrypt", "sign", "verify"),
  allow("secret-syncs", "read", "create", "edit", "delete", "sync-secrets", "import-secrets", "remove-secrets"),
  allow(
    "pki-syncs",
    "read",
    "create",
    "edit",
    "delete",
    "sync-certificates",
    "import-certificates",
    "remove-certificates",
  ),
  allow("app-connections", "read-app-connections", "connect-app-connections"),
  allow(
    "secret-events",
    "subscribe-on-created",
    "subscribe-on-updated",
    "subscribe-on-deleted",
    "subscribe-on-import-mutations",
  ),
];

const PROJECT_VIEWER: PermissionRule[] = [
  allow("secrets", "read", "describeSecret", "readValue"),
  allow("secret-folders", "read"),
  allow("secret-imports", "read"),
  allow("secret-rollback", "read"),
  allow("secret-rotation", "read"),
  allow("commits", "read"),
  allow("member", "read"),
  allow("groups", "read"),
  allow("role", "read"),
  allow("integrations", "read"),
  allow("webhooks", "read"),
  allow("identity", "read"),
  allow("service-tokens", "read"),
  allow("settings", "read"),
  allow("environments", "read"),
  allow("tags", "read"),
  allow("audit-logs", "read"),
  allow("ip-allowlist", "read"),
  allow("certificate-authorities", "read"),
  allow("certificates", "read"),
  allow("certificate-templates", "read"),
  allow("certificate-profiles", "read"),
  allow("certificate-policies", "read"),
  allow("pki-alerts", "read"),
  allow("pki-collections", "read"),
  allow("pki-subscribers", "read"),
  allow("ssh-hosts", "read"),
  allow("cmek", "read"),
  allow("secret-syncs", "read"),
  allow("pki-syncs", "read"),
];

/** Built-in project roles. */
export const PROJECT_ROLE_RULES: Record<string, PermissionRule[]> = {
  admin: all(PROJECT_PERMISSION_CATALOG),
  member: PROJECT_MEMBER,
  viewer: PROJECT_VIEWER,
  "no-access": [],
};

export const PROJECT_ROLE_NAMES: Record<string, string> = {
  admin: "Admin",
  member: "Member",
  viewer: "Viewer",
  "no-access": "No Access",
};

/** Built-in organization roles. Org admin does not imply project access. */
export const ORG_ROLE_RULES: Record<string, PermissionRule[]> = {
  admin: all(ORG_PERMISSION_CATALOG),
  member: [
    allow("workspace", "create"),
    allow("identity", "read"),
    allow("member", "read"),
    allow("groups", "read"),
    allow("role", "read"),
    allow("settings", "read"),
    allow("project-templates", "read"),
    allow("gateway", "list-gateways", "attach-gateways"),
    // Members use the organization's connections (rotations); reading where they point is the admin's.
    allow("app-connections", "connect-app-connections"),
  ],
  "no-access": [],
};

export const isBuiltInProjectRole = (slug: string) => Object.hasOwn(PROJECT_ROLE_RULES, slug);
export const isBuiltInOrgRole = (slug: string) => Object.hasOwn(ORG_ROLE_RULES, slug);

const orgRoleAbilities = new Map<string, Ability>();
/** The ability of a built-in org role, built once per role (a pure derivation of the constant rules). */
export const orgRoleAbility = (role: string) => {
  let ability = orgRoleAbilities.get(role);
  if (!ability) {
    ability = buildAbility(ORG_ROLE_RULES[role] ?? []);
    orgRoleAbilities.set(role, ability);
  }
  return ability;
};

/** "Nobody grants more than they hold" between org roles, asked of the engine's boundary check. */
export const orgRoleCovers = (holder: string, granted: string) =>
  isBuiltInOrgRole(holder) &&
  isBuiltInOrgRole(granted) &&
  missingPermissions(orgRoleAbility(holder), ORG_ROLE_RULES[granted]!).length === 0;
