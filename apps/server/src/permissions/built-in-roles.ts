import { ORG_PERMISSION_CATALOG, PROJECT_PERMISSION_CATALOG } from "@keyward/contract";
import { buildAbility, type Ability } from "./ability";
import { missingPermissions } from "./boundary";
import type { PermissionRule } from "./types";

const all = (catalog: Record<string, readonly string[]>): PermissionRule[] =>
  Object.entries(catalog).map(([subject, actions]) => ({ subject, action: [...actions], inverted: false }));

const allow = (subject: string, ...action: string[]): PermissionRule => ({ subject, action, inverted: false });
const CRUD = ["read", "create", "edit", "delete"];

// The built-in roles grant what Infisical's default roles grant, subject by subject, on the subjects of
// Keyward's catalog (subjects Keyward's catalog lacks are left out); `test/permissions/built-in-roles.test.ts`
// pins every role whole. Differences kept on purpose:
// - admin holds the whole catalog, so an admin can grant any rule a custom role or privilege may carry;
// - Infisical moved a member's certificate work to per-application roles (its "operator" reads profiles and
//   issues through them), which Keyward does not have: the project member keeps certificates and profile
//   issuance at the project, as Infisical's project member had certificates before the move, and the
//   viewer reads profiles (as the per-application auditor does);
// - the project member sets up and runs secret rotations (Infisical's member only reads them).
const SUBSCRIBE_ALL = [
  "subscribe-on-created",
  "subscribe-on-updated",
  "subscribe-on-deleted",
  "subscribe-on-import-mutations",
] as const;

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
  // Kept (see the top of the file): members set up and run rotations on the connections they may use.
  allow("secret-rotation", "read", "read-generated-credentials", "create", "edit", "delete", "rotate-secrets"),
  allow("commits", "read", "perform-rollback"),
  allow("member", "read", "create"),
  allow("groups", "read"),
  allow("role", "read"),
  allow("integrations", ...CRUD),
  allow("webhooks", ...CRUD),
  allow("identity", ...CRUD),
  allow("service-tokens", ...CRUD),
  allow("settings", ...CRUD),
  allow("environments", ...CRUD),
  allow("tags", ...CRUD),
  allow("audit-logs", "read"),
  allow("ip-allowlist", "read"),
  allow("certificate-authorities", "read"),
  // Project-level certificate work (see the top of the file).
  allow("certificates", ...CRUD, "import"),
  allow("certificate-templates", "read"),
  allow("certificate-profiles", "read", "issue-cert"),
  allow("certificate-policies", "read"),
  allow("pki-alerts", "read"),
  allow("pki-collections", "read"),
  allow("pki-subscribers", "read"),
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
  // Members use the project's connections (rotations); reading where they point is the admin's.
  allow("app-connections", "connect-app-connections"),
  allow("secret-events", ...SUBSCRIBE_ALL),
  allow(
    "secret-scanning-data-sources",
    "read-data-sources",
    "trigger-data-source-scans",
    "read-data-source-scans",
    "read-data-source-resources",
  ),
  allow("secret-scanning-findings", "read-findings", "update-findings"),
  allow("secret-scanning-configs", "read-configs"),
  allow("mcp-servers", "read"),
  allow("mcp-activity-logs", "read"),
  allow("mcp-endpoints", "read"),
  allow("approval-requests", "create"),
];

const PROJECT_VIEWER: PermissionRule[] = [
  allow("secrets", "describeSecret", "readValue"),
  allow("secret-folders", "read"),
  allow("secret-imports", "read"),
  allow("dynamic-secrets", "read-root-credential"),
  allow("secret-rollback", "read"),
  allow("secret-approval", "read"),
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
  // Project-level certificate work (see the top of the file): Infisical's per-application auditor reads profiles.
  allow("certificate-profiles", "read"),
  allow("certificate-policies", "read"),
  allow("ssh-certificates", "read"),
  allow("ssh-certificate-templates", "read"),
  allow("cmek", "read"),
  allow("secret-syncs", "read"),
  allow("pki-syncs", "read"),
  allow("secret-events", ...SUBSCRIBE_ALL),
  allow("secret-scanning-data-sources", "read-data-sources", "read-data-source-scans", "read-data-source-resources"),
  allow("secret-scanning-findings", "read-findings"),
  allow("secret-scanning-configs", "read-configs"),
  allow("mcp-servers", "read"),
  allow("mcp-activity-logs", "read"),
  allow("mcp-endpoints", "read"),
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
    // Kept at read (Infisical's member also creates, edits and deletes identities): Keyward checks token
    // creation and revocation on an organization identity as `edit` on identity (auth-methods/shared/
    // auth-config.ts), where Infisical asks for create-token and revoke-auth, so edit would let members mint tokens.
    allow("identity", "read"),
    allow("member", "read"),
    allow("groups", "read"),
    allow("role", "read"),
    allow("settings", "read"),
    allow("audit-logs", "read"),
    allow("gateway", "list-gateways", "create-gateways", "attach-gateways"),
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
