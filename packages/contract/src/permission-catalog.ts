/** Project permission subjects and their actions. */
const CRUD = ["read", "create", "edit", "delete"] as const;

export const PROJECT_PERMISSION_CATALOG = {
  secrets: ["read", "describeSecret", "readValue", "create", "edit", "delete"],
  "secret-folders": CRUD,
  "secret-imports": CRUD,
  "dynamic-secrets": [
    "read-root-credential",
    "create-root-credential",
    "edit-root-credential",
    "delete-root-credential",
    "lease",
  ],
  "secret-rollback": ["read", "create"],
  "secret-approval": CRUD,
  "secret-rotation": ["read", "read-generated-credentials", "create", "edit", "delete", "rotate-secrets"],
  commits: ["read", "perform-rollback"],
  member: ["read", "create", "edit", "delete", "grant-privileges", "assume-privileges"],
  groups: ["read", "create", "edit", "delete", "grant-privileges"],
  identity: [
    "read",
    "create",
    "edit",
    "delete",
    "grant-privileges",
    "assume-privileges",
    "revoke-auth",
    "create-token",
    "get-token",
    "delete-token",
  ],
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
  cmek: ["read", "create", "edit", "delete", "encrypt", "decrypt", "sign", "verify", "export-private-key"],
  "certificate-authorities": ["read", "create", "edit", "delete", "renew", "sign-intermediate"],
  certificates: ["read", "create", "edit", "delete", "read-private-key", "import"],
  "certificate-templates": ["read", "create", "edit", "delete", "issue-cert", "list-certs"],
  "certificate-profiles": [
    "read",
    "create",
    "edit",
    "delete",
    "issue-cert",
    "reveal-acme-eab-secret",
    "rotate-acme-eab-secret",
  ],
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
  "app-connections": [
    "read-app-connections",
    "create-app-connections",
    "edit-app-connections",
    "delete-app-connections",
    "connect-app-connections",
  ],
  "secret-events": [
    "subscribe-on-created",
    "subscribe-on-updated",
    "subscribe-on-deleted",
    "subscribe-on-import-mutations",
  ],
  kmip: ["create-clients", "update-clients", "delete-clients", "read-clients", "generate-client-certificates"],
  "secret-scanning-data-sources": [
    "read-data-sources",
    "create-data-sources",
    "edit-data-sources",
    "delete-data-sources",
    "trigger-data-source-scans",
    "read-data-source-scans",
    "read-data-source-resources",
  ],
  "secret-scanning-findings": ["read-findings", "update-findings"],
  "secret-scanning-configs": ["read-configs", "update-configs"],
  "pam-folders": CRUD,
  "pam-resources": CRUD,
  "pam-accounts": ["access", "read", "create", "edit", "delete"],
  "pam-sessions": ["read"],
  "mcp-servers": CRUD,
  "mcp-activity-logs": CRUD,
  "mcp-endpoints": ["read", "create", "edit", "delete", "connect"],
  "approval-requests": ["read", "create"],
  "approval-request-grants": ["read", "revoke"],
} as const satisfies Record<string, readonly string[]>;

/** Condition operators a rule may use on one field. */
export type ConditionOperator = "$eq" | "$ne" | "$in" | "$all" | "$glob" | "$elemMatch";

const EQ_NE_IN = ["$eq", "$ne", "$in"] as const;
const EQ_NE_IN_GLOB = ["$eq", "$ne", "$in", "$glob"] as const;
const EQ_IN_GLOB = ["$eq", "$in", "$glob"] as const;

/** Per field: the operators allowed and whether values are secret paths (which must start with "/"). */
export type ConditionFieldSpec = { operators: readonly ConditionOperator[]; path?: boolean };
const field = <const O extends readonly ConditionOperator[]>(operators: O, path = false) => ({ operators, path });
const SECRET_PATH = field(EQ_NE_IN_GLOB, true);
const V1_SECRET_CONDITIONS = { environment: field(EQ_NE_IN), secretPath: SECRET_PATH };
const ENV_AND_PATH = { environment: field(EQ_NE_IN_GLOB), secretPath: SECRET_PATH };
const BY_NAME = { name: field(EQ_NE_IN_GLOB) };

/**
 * The condition keys each subject accepts; subjects not listed take none.
 * `secretTags` and `metadata` are list-valued fields on the objects checked against them.
 */
export const PROJECT_PERMISSION_CONDITIONS = {
  secrets: {
    environment: field(EQ_NE_IN_GLOB),
    secretPath: SECRET_PATH,
    secretName: field(EQ_NE_IN_GLOB),
    secretTags: field(["$in", "$all"]),
    eventType: field(EQ_NE_IN),
  },
  "secret-folders": V1_SECRET_CONDITIONS,
  "secret-imports": ENV_AND_PATH,
  "dynamic-secrets": { ...ENV_AND_PATH, metadata: field(["$elemMatch"]) },
  "secret-rotation": V1_SECRET_CONDITIONS,
  "secret-syncs": { ...ENV_AND_PATH, connectionId: field(EQ_NE_IN) },
  "secret-events": ENV_AND_PATH,
  identity: { identityId: field(EQ_NE_IN) },
  "ssh-hosts": { hostname: field(EQ_IN_GLOB) },
  "pki-subscribers": { name: field(EQ_IN_GLOB) },
  "certificate-templates": BY_NAME,
  "certificate-policies": BY_NAME,
  "mcp-endpoints": BY_NAME,
  "certificate-authorities": BY_NAME,
  "pki-syncs": { name: field(EQ_NE_IN_GLOB), subscriberName: field(EQ_NE_IN_GLOB) },
  certificates: {
    commonName: field(EQ_NE_IN_GLOB),
    altNames: field(EQ_NE_IN_GLOB),
    serialNumber: field(EQ_NE_IN_GLOB),
    friendlyName: field(EQ_NE_IN_GLOB),
    status: field(EQ_NE_IN),
  },
  "certificate-profiles": { slug: field(EQ_NE_IN_GLOB) },
  "app-connections": { connectionId: field(EQ_NE_IN) },
  "pam-accounts": {
    resourceName: field(EQ_NE_IN_GLOB),
    accountName: field(EQ_NE_IN_GLOB),
    accountPath: field(EQ_NE_IN_GLOB),
  },
} as const satisfies Partial<Record<ProjectPermissionSubject, Record<string, ConditionFieldSpec>>>;

/** Fields whose object values are lists; conditions on them have set semantics. */
export const LIST_VALUED_CONDITION_FIELDS: readonly string[] = ["secretTags", "metadata"];

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
  "audit-logs": ["read"],
  "project-templates": CRUD,
  sso: CRUD,
  scim: CRUD,
  gateway: ["list-gateways", "create-gateways", "edit-gateways", "delete-gateways", "attach-gateways"],
  "app-connections": [
    "read-app-connections",
    "create-app-connections",
    "edit-app-connections",
    "delete-app-connections",
    "connect-app-connections",
  ],
} as const satisfies Record<string, readonly string[]>;

export type OrgPermissionSubject = keyof typeof ORG_PERMISSION_CATALOG;

export const BUILT_IN_PROJECT_ROLES = ["admin", "member", "viewer", "no-access"] as const;
export const BUILT_IN_ORG_ROLES = ["admin", "member", "no-access"] as const;
