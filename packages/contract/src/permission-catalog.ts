/** Project permission subjects and their actions (reference §1.9). */
const CRUD = ["read", "create", "edit", "delete"] as const;

export const PROJECT_PERMISSION_CATALOG = {
  secrets: ["read", "describeSecret", "readValue", "create", "edit", "delete"],
  "secret-folders": CRUD,
  "secret-imports": CRUD,
  "dynamic-secrets": ["read-root-credential", "create-root-credential", "edit-root-credential", "delete-root-credential", "lease"],
  "secret-rollback": ["read", "create"],
  "secret-approval": CRUD,
  "secret-rotation": ["read", "read-generated-credentials", "create", "edit", "delete", "rotate-secrets"],
  commits: ["read", "perform-rollback"],
  member: ["read", "create", "edit", "delete", "grant-privileges", "assume-privileges"],
  groups: ["read", "create", "edit", "delete", "grant-privileges"],
  identity: ["read", "create", "edit", "delete", "grant-privileges", "assume-privileges", "revoke-auth", "create-token", "get-token", "delete-token"],
  role: CRUD,
  integrations: CRUD,
  webhooks: CRUD,
  "service-tokens": CRUD,
  settings: CRUD,
  environments: CRUD,
  tags: CRUD,
  "ip-allowlist": CRUD,
  "audit-logs": ["read"],
  workspace: ["edit", "delete"],
  kms: ["edit"],
  cmek: ["read", "create", "edit", "delete", "encrypt", "decrypt", "sign", "verify"],
  "certificate-authorities": ["read", "create", "edit", "delete", "renew", "sign-intermediate"],
  certificates: ["read", "create", "edit", "delete", "read-private-key", "import"],
  "certificate-templates": ["read", "create", "edit", "delete", "issue-cert", "list-certs"],
  "certificate-profiles": ["read", "create", "edit", "delete", "issue-cert", "reveal-acme-eab-secret", "rotate-acme-eab-secret"],
  "certificate-policies": CRUD,
  "pki-alerts": CRUD,
  "pki-collections": CRUD,
  "pki-subscribers": ["read", "create", "edit", "delete", "issue-cert", "list-certs"],
  "ssh-certificate-authorities": CRUD,
  "ssh-certificates": CRUD,
  "ssh-certificate-templates": CRUD,
  "ssh-host-groups": CRUD,
  "ssh-hosts": ["read", "create", "edit", "delete", "issue-host-cert"],
  "secret-syncs": ["read", "create", "edit", "delete", "sync-secrets", "import-secrets", "remove-secrets"],
  "pki-syncs": ["read", "create", "edit", "delete", "sync-certificates", "import-certificates", "remove-certificates"],
  "app-connections": ["read-app-connections", "create-app-connections", "edit-app-connections", "delete-app-connections", "connect-app-connections"],
  "secret-events": ["subscribe-on-created", "subscribe-on-updated", "subscribe-on-deleted", "subscribe-on-import-mutations"],
} as const satisfies Record<string, readonly string[]>;

export type ProjectPermissionSubject = keyof typeof PROJECT_PERMISSION_CATALOG;
export const PROJECT_PERMISSION_SUBJECTS = Object.keys(PROJECT_PERMISSION_CATALOG) as ProjectPermissionSubject[];

/** Organization permission subjects and their actions. */
export const ORG_PERMISSION_CATALOG = {
  workspace: ["create"],
  identity: ["read", "create", "edit", "delete", "grant-privileges", "revoke-auth", "create-token"],
  member: CRUD,
  groups: ["read", "create", "edit", "delete", "grant-privileges", "add-members", "remove-members"],
  role: CRUD,
  settings: CRUD,
  "project-templates": CRUD,
  gateway: ["list-gateways", "create-gateways", "edit-gateways", "delete-gateways", "attach-gateways"],
} as const satisfies Record<string, readonly string[]>;

export type OrgPermissionSubject = keyof typeof ORG_PERMISSION_CATALOG;

export const BUILT_IN_PROJECT_ROLES = ["admin", "member", "viewer", "no-access"] as const;
export const BUILT_IN_ORG_ROLES = ["admin", "member", "no-access"] as const;
