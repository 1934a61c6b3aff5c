import { beforeAll, describe, expect, it } from "vitest";
import { ORG_ROLE_RULES, PROJECT_ROLE_RULES } from "../../src/permissions/built-in-roles";
import type { PermissionRule } from "../../src/permissions/types";
import { eventData, isEvent, openEventStream, type OpenedStream } from "../helpers/event-stream";
import { createFolder } from "../helpers/structure";
import { createIdentity, createProject, createTenant, expectOk, type Tenant } from "../helpers/tenant";

type RoleTable = Record<string, Record<string, string[]>>;

/**
 * Every built-in role, whole: each subject it holds and its actions, in the order the role lists them.
 * They follow Infisical's default roles on the subjects Keyward's catalog has (see the comment in
 * `src/permissions/built-in-roles.ts` for the differences kept); a change to a role changes this table.
 */
const PROJECT_ROLES: RoleTable = {
  admin: {
    secrets: ["read", "describeSecret", "readValue", "create", "edit", "delete"],
    "secret-folders": ["read", "create", "edit", "delete"],
    "secret-imports": ["read", "create", "edit", "delete"],
    "dynamic-secrets": [
      "read-root-credential",
      "create-root-credential",
      "edit-root-credential",
      "delete-root-credential",
      "lease",
    ],
    "secret-rollback": ["read", "create"],
    "secret-approval": ["read", "create", "edit", "delete"],
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
    role: ["read", "create", "edit", "delete"],
    integrations: ["read", "create", "edit", "delete"],
    webhooks: ["read", "create", "edit", "delete"],
    "service-tokens": ["read", "create", "edit", "delete"],
    settings: ["read", "create", "edit", "delete"],
    environments: ["read", "create", "edit", "delete"],
    tags: ["read", "create", "edit", "delete"],
    "ip-allowlist": ["read", "create", "edit", "delete"],
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
    "certificate-policies": ["read", "create", "edit", "delete"],
    "pki-alerts": ["read", "create", "edit", "delete"],
    "pki-collections": ["read", "create", "edit", "delete"],
    "pki-subscribers": ["read", "create", "edit", "delete", "issue-cert", "list-certs"],
    "ssh-certificate-authorities": ["read", "create", "edit", "delete"],
    "ssh-certificates": ["read", "create", "edit", "delete"],
    "ssh-certificate-templates": ["read", "create", "edit", "delete"],
    "ssh-host-groups": ["read", "create", "edit", "delete"],
    "ssh-hosts": ["read", "create", "edit", "delete", "issue-host-cert"],
    "secret-syncs": ["read", "create", "edit", "delete", "sync-secrets", "import-secrets", "remove-secrets"],
    "pki-syncs": [
      "read",
      "create",
      "edit",
      "delete",
      "sync-certificates",
      "import-certificates",
      "remove-certificates",
    ],
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
    "pam-folders": ["read", "create", "edit", "delete"],
    "pam-resources": ["read", "create", "edit", "delete"],
    "pam-accounts": ["access", "read", "create", "edit", "delete"],
    "pam-sessions": ["read"],
    "mcp-servers": ["read", "create", "edit", "delete"],
    "mcp-activity-logs": ["read", "create", "edit", "delete"],
    "mcp-endpoints": ["read", "create", "edit", "delete", "connect"],
    "approval-requests": ["read", "create"],
    "approval-request-grants": ["read", "revoke"],
  },
  member: {
    secrets: ["read", "describeSecret", "readValue", "create", "edit", "delete"],
    "secret-folders": ["read", "create", "edit", "delete"],
    "secret-imports": ["read", "create", "edit", "delete"],
    "dynamic-secrets": [
      "read-root-credential",
      "create-root-credential",
      "edit-root-credential",
      "delete-root-credential",
      "lease",
    ],
    "secret-rollback": ["read", "create"],
    "secret-approval": ["read"],
    "secret-rotation": ["read", "read-generated-credentials", "create", "edit", "delete", "rotate-secrets"],
    commits: ["read", "perform-rollback"],
    member: ["read", "create"],
    groups: ["read"],
    role: ["read"],
    integrations: ["read", "create", "edit", "delete"],
    webhooks: ["read", "create", "edit", "delete"],
    identity: ["read", "create", "edit", "delete"],
    "service-tokens": ["read", "create", "edit", "delete"],
    settings: ["read", "create", "edit", "delete"],
    environments: ["read", "create", "edit", "delete"],
    tags: ["read", "create", "edit", "delete"],
    "audit-logs": ["read"],
    "ip-allowlist": ["read"],
    "certificate-authorities": ["read"],
    certificates: ["read", "create", "edit", "delete", "import"],
    "certificate-templates": ["read"],
    "certificate-profiles": ["read", "issue-cert"],
    "certificate-policies": ["read"],
    "pki-alerts": ["read"],
    "pki-collections": ["read"],
    "pki-subscribers": ["read"],
    "ssh-certificates": ["read", "create"],
    "ssh-certificate-templates": ["read"],
    "ssh-hosts": ["read"],
    cmek: ["read", "create", "edit", "delete", "encrypt", "decrypt", "sign", "verify"],
    "secret-syncs": ["read", "create", "edit", "delete", "sync-secrets", "import-secrets", "remove-secrets"],
    "pki-syncs": [
      "read",
      "create",
      "edit",
      "delete",
      "sync-certificates",
      "import-certificates",
      "remove-certificates",
    ],
    "app-connections": ["connect-app-connections"],
    "secret-events": [
      "subscribe-on-created",
      "subscribe-on-updated",
      "subscribe-on-deleted",
      "subscribe-on-import-mutations",
    ],
    "secret-scanning-data-sources": [
      "read-data-sources",
      "trigger-data-source-scans",
      "read-data-source-scans",
      "read-data-source-resources",
    ],
    "secret-scanning-findings": ["read-findings", "update-findings"],
    "secret-scanning-configs": ["read-configs"],
    "mcp-servers": ["read"],
    "mcp-activity-logs": ["read"],
    "mcp-endpoints": ["read"],
    "approval-requests": ["create"],
  },
  viewer: {
    secrets: ["describeSecret", "readValue"],
    "secret-folders": ["read"],
    "secret-imports": ["read"],
    "dynamic-secrets": ["read-root-credential"],
    "secret-rollback": ["read"],
    "secret-approval": ["read"],
    "secret-rotation": ["read"],
    commits: ["read"],
    member: ["read"],
    groups: ["read"],
    role: ["read"],
    integrations: ["read"],
    webhooks: ["read"],
    identity: ["read"],
    "service-tokens": ["read"],
    settings: ["read"],
    environments: ["read"],
    tags: ["read"],
    "audit-logs": ["read"],
    "ip-allowlist": ["read"],
    "certificate-authorities": ["read"],
    certificates: ["read"],
    "certificate-templates": ["read"],
    "certificate-profiles": ["read"],
    "certificate-policies": ["read"],
    "ssh-certificates": ["read"],
    "ssh-certificate-templates": ["read"],
    cmek: ["read"],
    "secret-syncs": ["read"],
    "pki-syncs": ["read"],
    "secret-events": [
      "subscribe-on-created",
      "subscribe-on-updated",
      "subscribe-on-deleted",
      "subscribe-on-import-mutations",
    ],
    "secret-scanning-data-sources": ["read-data-sources", "read-data-source-scans", "read-data-source-resources"],
    "secret-scanning-findings": ["read-findings"],
    "secret-scanning-configs": ["read-configs"],
    "mcp-servers": ["read"],
    "mcp-activity-logs": ["read"],
    "mcp-endpoints": ["read"],
  },
  "no-access": {},
};

const ORG_ROLES: RoleTable = {
  admin: {
    workspace: ["create"],
    identity: ["read", "create", "edit", "delete", "grant-privileges", "revoke-auth", "create-token"],
    member: ["read", "create", "edit", "delete"],
    groups: ["read", "create", "edit", "delete", "grant-privileges", "add-members", "remove-members"],
    role: ["read", "create", "edit", "delete"],
    settings: ["read", "create", "edit", "delete"],
    "audit-logs": ["read"],
    "project-templates": ["read", "create", "edit", "delete"],
    sso: ["read", "create", "edit", "delete"],
    scim: ["read", "create", "edit", "delete"],
    gateway: ["list-gateways", "create-gateways", "edit-gateways", "delete-gateways", "attach-gateways"],
    "app-connections": [
      "read-app-connections",
      "create-app-connections",
      "edit-app-connections",
      "delete-app-connections",
      "connect-app-connections",
    ],
  },
  member: {
    workspace: ["create"],
    identity: ["read"],
    member: ["read"],
    groups: ["read"],
    role: ["read"],
    settings: ["read"],
    "audit-logs": ["read"],
    gateway: ["list-gateways", "create-gateways", "attach-gateways"],
    "app-connections": ["connect-app-connections"],
  },
  "no-access": {},
};

/** A role's rules as the table writes them; every built-in rule is an unconditioned allow. */
const tableOf = (rules: PermissionRule[]) => {
  const table: Record<string, string[]> = {};
  for (const rule of rules) {
    expect(rule.inverted, rule.subject).toBe(false);
    expect(rule.conditions, rule.subject).toBeUndefined();
    expect(table, `${rule.subject} appears once`).not.toHaveProperty(rule.subject);
    table[rule.subject] = [...rule.action];
  }
  return table;
};

describe("built-in roles", () => {
  it("project roles hold exactly the pinned subjects and actions", () => {
    expect(Object.keys(PROJECT_ROLE_RULES)).toEqual(Object.keys(PROJECT_ROLES));
    for (const [role, rules] of Object.entries(PROJECT_ROLE_RULES))
      expect(tableOf(rules), role).toEqual(PROJECT_ROLES[role]);
  });

  it("organization roles hold exactly the pinned subjects and actions", () => {
    expect(Object.keys(ORG_ROLE_RULES)).toEqual(Object.keys(ORG_ROLES));
    for (const [role, rules] of Object.entries(ORG_ROLE_RULES)) expect(tableOf(rules), role).toEqual(ORG_ROLES[role]);
  });

  describe("through the API", () => {
    let tenant: Tenant;
    let projectId: string;
    beforeAll(async () => {
      tenant = await createTenant();
      projectId = (await createProject(tenant)).id;
      await createFolder(tenant, projectId, "dev", "/", "app");
    });

    it("a project's built-in viewer role lists as the table has it", async () => {
      const { role } = expectOk(await tenant.admin.roles.getBySlug({ params: { projectId, roleSlug: "viewer" } }));
      const listed = Object.fromEntries(role.permissions.map((rule) => [rule.subject, rule.action]));
      expect(listed).toEqual(PROJECT_ROLES.viewer);
    });

    it("a workload identity with the project viewer role subscribes to the events stream and gets events", async () => {
      const viewer = await createIdentity(tenant, { projectId, projectRole: "viewer" });
      const register = ["secret:create", "secret:update", "secret:delete", "secret:import-mutation"].map((event) => ({
        event,
        conditions: { environmentSlug: "dev", secretPath: "/app" },
      }));
      let stream: OpenedStream | undefined;
      try {
        stream = await openEventStream(tenant.app.baseUrl, viewer.token, { projectId, register });
        expect(stream.error).toBeUndefined();
        expect(stream.status).toBe(200);
        expectOk(
          await tenant.admin.secretsV4.create({
            params: { secretName: "WATCHED_KEY" },
            body: { projectId, environment: "dev", secretPath: "/app", secretValue: "some-value" },
          }),
        );
        const event = await stream.next(isEvent);
        expect(event.event).toBe("secret:create");
        expect(eventData(event).data.payload).toEqual([
          { environment: "dev", secretPath: "/app", secretKeys: "WATCHED_KEY", secretKey: "WATCHED_KEY" },
        ]);
      } finally {
        stream?.close();
      }
    });
  });
});
