import type { AppRoute } from "@ts-rest/core";
import type { Contract } from "@keyward/contract";

/**
 * How an operation's event is written:
 * - `change`: inside the transaction that makes the change (no change without its event);
 * - `login`: inside the transaction that issues the token; a refused login records `<type>-failed`;
 * - `read`: buffered and written in batches off the request path (reads stay write-free).
 */
export type AuditMode = "change" | "login" | "read";
export type AuditSpec = { type: string; mode: AuditMode };

/** `a.b.c` keys of the contract's routes, split by whether they change anything. */
type RouteKeys<R, Mutating extends boolean, P extends string = ""> = {
  [K in keyof R & string]: R[K] extends AppRoute
    ? R[K]["method"] extends "GET"
      ? Mutating extends true
        ? never
        : `${P}${K}`
      : Mutating extends true
        ? `${P}${K}`
        : never
    : RouteKeys<R[K], Mutating, `${P}${K}.`>;
}[keyof R & string];

export type MutatingOperation = RouteKeys<Contract, true>;
export type ReadOperation = RouteKeys<Contract, false>;

const change = (type: string): AuditSpec => ({ type, mode: "change" });
const login = (type: string): AuditSpec => ({ type, mode: "login" });
const read = (type: string): AuditSpec => ({ type, mode: "read" });

/** The auth-method events of one method: attach, update and revoke. */
const authMethod = (method: string) => ({
  attach: change(`add-identity-${method}-auth`),
  update: change(`update-identity-${method}-auth`),
  revoke: change(`revoke-identity-${method}-auth`),
  login: login(`login-identity-${method}-auth`),
});

const secretWrites = {
  create: change("create-secret"),
  update: change("update-secret"),
  delete: change("delete-secret"),
  batchCreate: change("create-secrets"),
  batchUpdate: change("update-secrets"),
  batchDelete: change("delete-secrets"),
};

const tagWrites = {
  create: change("create-secret-tag"),
  update: change("update-secret-tag"),
  delete: change("delete-secret-tag"),
};

const rotationWrites = {
  create: change("create-secret-rotation"),
  update: change("update-secret-rotation"),
  delete: change("delete-secret-rotation"),
  rotate: change("secret-rotation-rotate-secrets"),
};

const connectionWrites = {
  create: change("create-app-connection"),
  update: change("update-app-connection"),
  delete: change("delete-app-connection"),
};

const syncWrites = {
  create: change("create-secret-sync"),
  // A plan changes nothing: it is recorded as a read.
  planNew: read("plan-secret-sync"),
  plan: read("plan-secret-sync"),
  // A question about the organization's syncs; nothing changes.
  checkDestination: read("check-secret-sync-destination"),
  update: change("update-secret-sync"),
  delete: change("delete-secret-sync"),
  // The trigger records who asked (syncStatus "pending"); the run records its outcome, the platform as actor.
  syncSecrets: change("secret-sync-sync-secrets"),
  importSecrets: change("secret-sync-import-secrets"),
  removeSecrets: change("secret-sync-remove-secrets"),
};

const universal = authMethod("universal");
const ldap = authMethod("ldap");

/**
 * Every operation of the contract that changes something, with its event. Typed exhaustively: a new
 * mutating route without an entry here does not compile.
 */
export const MUTATION_EVENTS: Record<MutatingOperation, AuditSpec> = {
  "system.bootstrap": change("bootstrap-instance"),
  "system.createOrganization": change("create-organization"),
  "rootKeys.startRotation": change("start-root-key-rotation"),
  "rootKeys.updateEncryptionStrategy": change("update-root-encryption-strategy"),
  "identities.create": change("create-identity"),
  "identities.update": change("update-identity"),
  "identities.delete": change("delete-identity"),
  "projectIdentities.create": change("create-identity"),
  "projectIdentities.update": change("update-identity"),
  "projectIdentities.delete": change("delete-identity"),
  "projects.createV2": change("create-project"),
  "projects.create": change("create-project"),
  "projects.delete": change("delete-project"),
  "projects.createEnvironment": change("create-environment"),
  "projects.updateEnvironment": change("update-environment"),
  "projects.deleteEnvironment": change("delete-environment"),
  "projects.addIdentityMembership": change("create-identity-project-membership"),
  "projects.updateIdentityMembership": change("update-identity-project-membership"),
  "projects.deleteIdentityMembership": change("delete-identity-project-membership"),
  "roles.create": change("create-project-role"),
  "roles.update": change("update-project-role"),
  "roles.delete": change("delete-project-role"),
  "privileges.v1.createPermanent": change("create-identity-project-additional-privilege"),
  "privileges.v1.createTemporary": change("create-identity-project-additional-privilege"),
  "privileges.v1.update": change("update-identity-project-additional-privilege"),
  "privileges.v1.delete": change("delete-identity-project-additional-privilege"),
  "privileges.v2.create": change("create-identity-project-additional-privilege"),
  "privileges.v2.update": change("update-identity-project-additional-privilege"),
  "privileges.v2.delete": change("delete-identity-project-additional-privilege"),
  "folders.create": change("create-folder"),
  "folders.update": change("update-folder"),
  "folders.delete": change("delete-folder"),
  "secretImports.create": change("create-secret-import"),
  "secretImports.update": change("update-secret-import"),
  "secretImports.delete": change("delete-secret-import"),
  "projectTemplates.create": change("create-project-template"),
  "projectTemplates.update": change("update-project-template"),
  "projectTemplates.delete": change("delete-project-template"),
  "groups.create": change("create-group"),
  "groups.update": change("update-group"),
  "groups.delete": change("delete-group"),
  "groups.addUser": change("add-user-to-group"),
  "groups.removeUser": change("remove-user-from-group"),
  "groups.addIdentity": change("add-identity-to-group"),
  "groups.removeIdentity": change("remove-identity-from-group"),
  "projectGroups.add": change("add-group-to-project"),
  "projectGroups.update": change("update-group-project-membership"),
  "projectGroups.remove": change("remove-group-from-project"),
  "tokenAuth.attach": change("add-identity-token-auth"),
  "tokenAuth.update": change("update-identity-token-auth"),
  "tokenAuth.revoke": change("revoke-identity-token-auth"),
  "tokenAuth.createToken": change("create-token-identity-token-auth"),
  "tokenAuth.updateToken": change("update-token-identity-token-auth"),
  "tokenAuth.revokeTokenById": change("revoke-token-identity-token-auth"),
  "accessTokens.revoke": change("revoke-identity-access-token"),
  "accessTokens.renew": change("renew-identity-access-token"),
  "universalAuth.login": universal.login,
  "universalAuth.attach": universal.attach,
  "universalAuth.update": universal.update,
  "universalAuth.revoke": universal.revoke,
  "universalAuth.createClientSecret": change("create-identity-universal-auth-client-secret"),
  "universalAuth.revokeClientSecret": change("revoke-identity-universal-auth-client-secret"),
  "universalAuth.clearLockouts": change("clear-identity-universal-auth-lockouts"),
  "ldapAuth.login": ldap.login,
  "ldapAuth.attach": ldap.attach,
  "ldapAuth.update": ldap.update,
  "ldapAuth.revoke": ldap.revoke,
  "ldapAuth.clearLockouts": change("clear-identity-ldap-auth-lockouts"),
  ...prefixed("kubernetesAuth", authMethod("kubernetes")),
  ...prefixed("oidcAuth", authMethod("oidc")),
  ...prefixed("gcpAuth", authMethod("gcp")),
  ...prefixed("jwtAuth", authMethod("jwt")),
  ...prefixed("awsAuth", authMethod("aws")),
  ...prefixed("azureAuth", authMethod("azure")),
  "gateways.create": change("create-gateway"),
  "gateways.update": change("update-gateway"),
  "gateways.delete": change("delete-gateway"),
  "gateways.mintEnrollmentToken": change("create-gateway-enrollment-token"),
  "gateways.revoke": change("revoke-gateway"),
  "gateways.login": change("login-gateway"),
  "gateways.heartbeat": change("gateway-heartbeat"),
  "gateways.tokenAuthEnroll": change("login-gateway"),
  "gateways.heartbeatV2": change("gateway-heartbeat"),
  "certificateAuthorities.create": change("create-certificate-authority"),
  "certificateAuthorities.update": change("update-certificate-authority"),
  "certificateAuthorities.delete": change("delete-certificate-authority"),
  "certificateAuthorities.renew": change("renew-certificate-authority"),
  "certificateProfiles.create": change("create-certificate-profile"),
  "certificateProfiles.update": change("update-certificate-profile"),
  "certificateProfiles.delete": change("delete-certificate-profile"),
  "certificateProfiles.rotateAcmeEabSecret": change("rotate-certificate-profile-eab-secret"),
  "certificateProfiles.issueScepChallenge": change("issue-scep-dynamic-challenge"),
  "certificates.issue": change("issue-cert"),
  "certificates.renew": change("renew-certificate"),
  "certificates.revoke": change("revoke-cert"),
  "dynamicSecrets.create": change("create-dynamic-secret"),
  "dynamicSecrets.update": change("update-dynamic-secret"),
  "dynamicSecrets.delete": change("delete-dynamic-secret"),
  "dynamicSecretLeases.create": change("create-dynamic-secret-lease"),
  "dynamicSecretLeases.renew": change("renew-dynamic-secret-lease"),
  "dynamicSecretLeases.delete": change("delete-dynamic-secret-lease"),
  ...prefixed("secretsV3", secretWrites),
  ...prefixed("secretsV4", secretWrites),
  ...prefixed("secretTags.projects", tagWrites),
  ...prefixed("secretTags.workspace", tagWrites),
  "secretsMove.move": change("move-secrets"),
  "secretVersions.rollback": change("rollback-secret-version"),
  "pit.rollback": change("pit-rollback-commit"),
  "pit.revert": change("pit-revert-commit"),
  "pit.batchCommit": change("pit-process-new-commit-raw"),
  "secretSnapshots.rollback": change("pit-rollback-commit"),
  "ssh.createCa": change("create-ssh-certificate-authority"),
  "ssh.updateCa": change("update-ssh-certificate-authority"),
  "ssh.deleteCa": change("delete-ssh-certificate-authority"),
  "ssh.createTemplate": change("create-ssh-certificate-template"),
  "ssh.updateTemplate": change("update-ssh-certificate-template"),
  "ssh.deleteTemplate": change("delete-ssh-certificate-template"),
  "ssh.sign": change("sign-ssh-key"),
  "ssh.issue": change("issue-ssh-creds"),
  "ssh.revoke": change("revoke-ssh-certificate"),
  "ssh.createHost": change("create-ssh-host"),
  "ssh.updateHost": change("update-ssh-host"),
  "ssh.deleteHost": change("delete-ssh-host"),
  "ssh.issueHostCert": change("issue-ssh-host-host-cert"),
  "ssh.issueUserCert": change("issue-ssh-host-user-cert"),
  "ssh.createHostGroup": change("create-ssh-host-group"),
  "ssh.updateHostGroup": change("update-ssh-host-group"),
  "ssh.deleteHostGroup": change("delete-ssh-host-group"),
  "ssh.addHostToGroup": change("add-host-to-ssh-host-group"),
  "ssh.removeHostFromGroup": change("remove-host-from-ssh-host-group"),
  "kms.create": change("create-cmek"),
  "kms.update": change("update-cmek"),
  "kms.delete": change("delete-cmek"),
  "kms.rotate": change("rotate-cmek"),
  // Cryptographic operations change nothing stored: recorded like reads.
  "kms.encrypt": read("cmek-encrypt"),
  "kms.decrypt": read("cmek-decrypt"),
  "kms.sign": read("cmek-sign"),
  "kms.verify": read("cmek-verify"),
  "auditLogs.setProjectRetention": change("update-project-audit-logs-retention"),
  "auditLogStreams.create": change("create-audit-log-stream"),
  "auditLogStreams.update": change("update-audit-log-stream"),
  "auditLogStreams.delete": change("delete-audit-log-stream"),
  "users.revokeMySessions": change("revoke-user-sessions"),
  "users.updateOrgMembership": change("update-user-org-membership"),
  "users.deleteOrgMembership": change("remove-user-from-org"),
  "users.inviteToOrg": change("invite-users-to-org"),
  "users.inviteProjectMembers": change("add-project-members"),
  "users.removeProjectMembers": change("remove-project-member"),
  "sso.createOidcConfig": change("create-oidc-config"),
  "sso.updateOidcConfig": change("update-oidc-config"),
  "sso.verifyEmailCode": change("login-user-oidc"),
  "sessions.refresh": change("refresh-user-session"),
  "sessions.logout": change("logout-user-session"),
  "scim.createScimToken": change("create-scim-token"),
  "scim.deleteScimToken": change("delete-scim-token"),
  "sessions.cliSession": change("create-cli-session"),
  "userPrivileges.create": change("create-user-additional-privilege"),
  "userPrivileges.update": change("update-user-additional-privilege"),
  "userPrivileges.delete": change("delete-user-additional-privilege"),
  "sessions.checkAuth": read("check-auth"),
  // Opening a stream changes nothing: recorded like a read, when the stream ends.
  "events.subscribeProjectEvents": read("subscribe-project-events"),
  ...prefixed("secretRotations.postgresCredentials", rotationWrites),
  ...prefixed("secretRotations.mysqlCredentials", rotationWrites),
  ...prefixed("secretRotations.redisCredentials", rotationWrites),
  ...prefixed("secretRotations.ldapPassword", rotationWrites),
  ...prefixed("appConnections.postgres", connectionWrites),
  ...prefixed("appConnections.mysql", connectionWrites),
  ...prefixed("appConnections.redis", connectionWrites),
  ...prefixed("appConnections.ldap", connectionWrites),
  ...prefixed("appConnections.aws", connectionWrites),
  ...prefixed("appConnections.github", connectionWrites),
  ...prefixed("appConnections.gcp", connectionWrites),
  ...prefixed("appConnections.azureKeyVault", connectionWrites),
  ...prefixed("secretSyncs.awsSecretsManager", syncWrites),
  ...prefixed("secretSyncs.awsParameterStore", syncWrites),
  ...prefixed("secretSyncs.github", (({ importSecrets: _import, ...writes }) => writes)(syncWrites)),
  ...prefixed("secretSyncs.gcpSecretManager", syncWrites),
  ...prefixed("secretSyncs.azureKeyVault", syncWrites),
  "secretApprovalPolicies.create": change("create-secret-approval-policy"),
  "secretApprovalPolicies.update": change("update-secret-approval-policy"),
  "secretApprovalPolicies.delete": change("delete-secret-approval-policy"),
  "secretApprovalRequests.review": change("secret-approval-request-review"),
  // A reopening records secret-approval-reopened instead.
  "secretApprovalRequests.status": change("secret-approval-closed"),
  "secretApprovalRequests.merge": change("secret-approval-merged"),
  "accessApprovalPolicies.create": change("create-access-approval-policy"),
  "accessApprovalPolicies.update": change("update-access-approval-policy"),
  "accessApprovalPolicies.delete": change("delete-access-approval-policy"),
  "accessApprovalRequests.create": change("project-access-request"),
  "accessApprovalRequests.review": change("review-access-request"),
  "accessApprovalRequests.revoke": change("revoke-access-request"),
};

/** Reads that are recorded: secret values and private key material leaving the server. */
export const READ_EVENTS: Partial<Record<ReadOperation, AuditSpec>> = {
  "ssh.getCa": read("get-ssh-certificate-authority"),
  "ssh.caTemplates": read("get-ssh-certificate-authority-certificate-templates"),
  "ssh.getTemplate": read("get-ssh-certificate-template"),
  "ssh.getHost": read("get-ssh-host"),
  "ssh.getHostGroup": read("get-ssh-host-group"),
  "ssh.hostGroupHosts": read("get-ssh-host-group-hosts"),
  "pit.count": read("get-project-pit-commit-count"),
  "pit.list": read("get-project-pit-commits"),
  "pit.changes": read("get-project-pit-commit-changes"),
  "pit.compare": read("pit-compare-folder-states"),
  "pit.state": read("pit-get-folder-state"),
  "secretsV3.list": read("get-secrets"),
  "secretsV4.list": read("get-secrets"),
  "secretsV3.get": read("get-secret"),
  "secretsV4.get": read("get-secret"),
  "secretsV3.getById": read("get-secret"),
  "secretsV4.getById": read("get-secret"),
  "secretSearch.search": read("search-secrets"),
  "kms.privateKey": read("cmek-get-private-key"),
};

function prefixed<P extends string, T extends Record<string, AuditSpec>>(prefix: P, specs: T) {
  return Object.fromEntries(Object.entries(specs).map(([key, spec]) => [`${prefix}.${key}`, spec])) as {
    [K in keyof T & string as `${P}.${K}`]: AuditSpec;
  };
}

/** The event of an operation, if it is recorded. */
export const auditSpecOf = (operation: string): AuditSpec | undefined =>
  (MUTATION_EVENTS as Record<string, AuditSpec>)[operation] ?? (READ_EVENTS as Record<string, AuditSpec>)[operation];

/** The failed-login event of a login operation's event type. */
export const failedLoginType = (type: string) => `${type}-failed`;

/** Every event type the routes record (a login's refused variant too), sorted: the console's filter offers them. */
export const routeEventTypes = (): string[] => {
  const specs = [...Object.values(MUTATION_EVENTS), ...Object.values(READ_EVENTS)] as AuditSpec[];
  const types = specs.flatMap((spec) =>
    spec.mode === "login" ? [spec.type, failedLoginType(spec.type)] : [spec.type],
  );
  return [...new Set([...types, ...PLATFORM_EVENT_TYPES])].sort();
};

/**
 * The events background work records with no caller (the platform actor): a schedule's rotation or
 * renewal, a lease's expiry, a sync the events start, the end of a root-key rotation. A platform change
 * can name only one of these, so the console's event-type picker offers every type that can appear.
 */
export const PLATFORM_EVENT_TYPES = [
  "automated-renew-certificate",
  "complete-root-key-rotation",
  "revoke-dynamic-secret-lease",
  "secret-rotation-rotate-secrets",
  "secret-sync-import-secrets",
  "secret-sync-sync-secrets",
] as const;
export type PlatformEventType = (typeof PLATFORM_EVENT_TYPES)[number];
