import { initContract, type AppRouter, type RouterOptions } from "@ts-rest/core";
import { accessTokensContract, tokenAuthContract } from "./token-auth.contract";
import { bootstrapContract } from "./bootstrap.contract";
import { rootKeysContract } from "./root-keys.contract";
import { commonResponses } from "./common";
import { gcpAuthContract } from "./gcp-auth.contract";
import { jwtAuthContract } from "./jwt-auth.contract";
import { awsAuthContract } from "./aws-auth.contract";
import { azureAuthContract } from "./azure-auth.contract";
import { kubernetesAuthContract } from "./kubernetes-auth.contract";
import { ldapAuthContract } from "./ldap-auth.contract";
import { oidcAuthContract } from "./oidc-auth.contract";
import { universalAuthContract } from "./universal-auth.contract";
import { identitiesContract, projectIdentitiesContract } from "./identities.contract";
import { projectsContract } from "./projects.contract";
import { rolesContract } from "./roles.contract";
import { privilegesContract } from "./privileges.contract";
import { foldersContract } from "./folders.contract";
import { secretImportsContract } from "./secret-imports.contract";
import { projectTemplatesContract } from "./project-templates.contract";
import { groupsContract, projectGroupsContract } from "./groups.contract";
import { gatewaysContract } from "./gateways.contract";
import { certificateAuthoritiesContract } from "./certificate-authorities.contract";
import { certificateProfilesContract } from "./certificate-profiles.contract";
import { certificatesContract } from "./certificates.contract";
import { dynamicSecretsContract } from "./dynamic-secrets.contract";
import { dynamicSecretLeasesContract } from "./dynamic-secret-leases.contract";
import { secretsV3Contract, secretsV4Contract } from "./secrets.contract";
import { secretReferencesContract, secretsMoveContract } from "./secrets-move.contract";
import { secretTagsContract } from "./secret-tags.contract";
import { secretSearchContract } from "./secret-search.contract";
import { secretVersionsContract } from "./secret-versions.contract";
import { kmsContract } from "./kms.contract";
import { auditLogsContract, auditLogStreamsContract } from "./audit-logs.contract";
import { sessionsContract, ssoContract, userPrivilegesContract, usersContract } from "./people.contract";
import { scimContract } from "./scim.contract";
import { eventsContract } from "./events.contract";
import { secretRotationsContract } from "./secret-rotations.contract";
import { appConnectionsContract } from "./app-connections.contract";
import { secretSyncsContract } from "./secret-syncs.contract";
import { pitContract, secretSnapshotsContract } from "./pit.contract";
import { sshContract } from "./ssh.contract";
import { secretApprovalPoliciesContract, secretApprovalRequestsContract } from "./secret-approvals.contract";
import { accessApprovalPoliciesContract, accessApprovalRequestsContract } from "./access-approvals.contract";

export * from "./common";
export * from "./empty-query";
export * from "./duration";
export * from "./base64";
export * from "./permission-catalog";
export * from "./auth-common.schema";
export * from "./roles.schema";
export * from "./bootstrap.contract";
export * from "./root-keys.contract";
export * from "./identities.contract";
export * from "./projects.contract";
export * from "./glob-pattern";
export * from "./permission-template";
export * from "./permission.schema";
export * from "./permission-rule.types";
export * from "./privilege.schema";
export * from "./privileges.contract";
export * from "./roles.contract";
export * from "./folders.contract";
export * from "./secret-imports.contract";
export * from "./project-templates.contract";
export * from "./groups.contract";
export * from "./token-auth.contract";
export * from "./auth-methods.schema";
export * from "./universal-auth.contract";
export * from "./ldap-auth.contract";
export * from "./kubernetes-auth.contract";
export * from "./oidc-auth.contract";
export * from "./gcp-auth.contract";
export * from "./jwt-auth.contract";
export * from "./aws-auth.contract";
export * from "./azure-auth.contract";
export * from "./gateways.contract";
export * from "./certificate-authorities.contract";
export * from "./certificate-profiles.contract";
export * from "./certificates.contract";
export * from "./dynamic-secrets.contract";
export * from "./dynamic-secret-leases.contract";
export * from "./secrets.contract";
export * from "./secrets-move.contract";
export * from "./secret-tags.contract";
export * from "./secret-search.contract";
export * from "./secret-versions.contract";
export * from "./kms.contract";
export * from "./audit-logs.contract";
export * from "./people.contract";
export * from "./scim.contract";
export * from "./events.contract";
export * from "./secret-rotations.contract";
export * from "./app-connections.contract";
export * from "./secret-syncs.contract";
export * from "./pit.contract";
export * from "./pit.schema";
export * from "./ssh.contract";
export * from "./secret-approvals.contract";
export * from "./access-approvals.contract";
export * from "./permission-conditions";

// Annotated so declaration files can name it (its inferred type uses a symbol ts-rest does not export).
const c: ReturnType<typeof initContract> = initContract();

/** The routers of the API, named so that declaration files refer to them instead of spelling them out. */
type Routers = {
  system: typeof bootstrapContract;
  rootKeys: typeof rootKeysContract;
  identities: typeof identitiesContract;
  projects: typeof projectsContract;
  projectIdentities: typeof projectIdentitiesContract;
  roles: typeof rolesContract;
  privileges: typeof privilegesContract;
  folders: typeof foldersContract;
  secretImports: typeof secretImportsContract;
  projectTemplates: typeof projectTemplatesContract;
  groups: typeof groupsContract;
  projectGroups: typeof projectGroupsContract;
  tokenAuth: typeof tokenAuthContract;
  accessTokens: typeof accessTokensContract;
  universalAuth: typeof universalAuthContract;
  ldapAuth: typeof ldapAuthContract;
  kubernetesAuth: typeof kubernetesAuthContract;
  oidcAuth: typeof oidcAuthContract;
  gcpAuth: typeof gcpAuthContract;
  jwtAuth: typeof jwtAuthContract;
  awsAuth: typeof awsAuthContract;
  azureAuth: typeof azureAuthContract;
  gateways: typeof gatewaysContract;
  certificateAuthorities: typeof certificateAuthoritiesContract;
  certificateProfiles: typeof certificateProfilesContract;
  certificates: typeof certificatesContract;
  dynamicSecrets: typeof dynamicSecretsContract;
  dynamicSecretLeases: typeof dynamicSecretLeasesContract;
  secretsMove: typeof secretsMoveContract;
  secretReferences: typeof secretReferencesContract;
  secretsV3: typeof secretsV3Contract;
  secretsV4: typeof secretsV4Contract;
  secretTags: typeof secretTagsContract;
  secretSearch: typeof secretSearchContract;
  secretVersions: typeof secretVersionsContract;
  kms: typeof kmsContract;
  auditLogs: typeof auditLogsContract;
  auditLogStreams: typeof auditLogStreamsContract;
  users: typeof usersContract;
  sso: typeof ssoContract;
  sessions: typeof sessionsContract;
  userPrivileges: typeof userPrivilegesContract;
  scim: typeof scimContract;
  events: typeof eventsContract;
  secretRotations: typeof secretRotationsContract;
  appConnections: typeof appConnectionsContract;
  secretSyncs: typeof secretSyncsContract;
  pit: typeof pitContract;
  secretSnapshots: typeof secretSnapshotsContract;
  ssh: typeof sshContract;
  secretApprovalPolicies: typeof secretApprovalPoliciesContract;
  secretApprovalRequests: typeof secretApprovalRequestsContract;
  accessApprovalPolicies: typeof accessApprovalPoliciesContract;
  accessApprovalRequests: typeof accessApprovalRequestsContract;
};

// Strict: a client's response type lists exactly the statuses the server sends, nothing typed `unknown`.
const options = { commonResponses, strictStatusCodes: true } as const;

/**
 * What `c.router` makes of these routers and options. A generic alias, so that `Routers` and the
 * options are plain type references below: declaration bundlers follow those, and do not follow
 * type arguments written inside `typeof c.router<…>` (the published client lost them).
 */
type Composed<R extends AppRouter, O extends RouterOptions> = ReturnType<typeof c.router<R, string, O>>;

/** The whole API, with the common error responses on every route. */
export type Contract = Composed<Routers, typeof options>;

/** The whole API. Each resource's routes live in its own file; this composes them once. */
export const contract: Contract = c.router<Routers, string, typeof options>(
  {
    system: bootstrapContract,
    rootKeys: rootKeysContract,
    identities: identitiesContract,
    projects: projectsContract,
    projectIdentities: projectIdentitiesContract,
    roles: rolesContract,
    privileges: privilegesContract,
    folders: foldersContract,
    secretImports: secretImportsContract,
    projectTemplates: projectTemplatesContract,
    groups: groupsContract,
    projectGroups: projectGroupsContract,
    tokenAuth: tokenAuthContract,
    accessTokens: accessTokensContract,
    universalAuth: universalAuthContract,
    ldapAuth: ldapAuthContract,
    kubernetesAuth: kubernetesAuthContract,
    oidcAuth: oidcAuthContract,
    gcpAuth: gcpAuthContract,
    jwtAuth: jwtAuthContract,
    awsAuth: awsAuthContract,
    azureAuth: azureAuthContract,
    gateways: gatewaysContract,
    certificateAuthorities: certificateAuthoritiesContract,
    certificateProfiles: certificateProfilesContract,
    certificates: certificatesContract,
    dynamicSecrets: dynamicSecretsContract,
    dynamicSecretLeases: dynamicSecretLeasesContract,
    secretsMove: secretsMoveContract,
    secretReferences: secretReferencesContract,
    secretsV3: secretsV3Contract,
    secretsV4: secretsV4Contract,
    secretTags: secretTagsContract,
    secretSearch: secretSearchContract,
    secretVersions: secretVersionsContract,
    kms: kmsContract,
    auditLogs: auditLogsContract,
    auditLogStreams: auditLogStreamsContract,
    users: usersContract,
    sso: ssoContract,
    sessions: sessionsContract,
    userPrivileges: userPrivilegesContract,
    scim: scimContract,
    events: eventsContract,
    secretRotations: secretRotationsContract,
    appConnections: appConnectionsContract,
    secretSyncs: secretSyncsContract,
    pit: pitContract,
    secretSnapshots: secretSnapshotsContract,
    ssh: sshContract,
    secretApprovalPolicies: secretApprovalPoliciesContract,
    secretApprovalRequests: secretApprovalRequestsContract,
    accessApprovalPolicies: accessApprovalPoliciesContract,
    accessApprovalRequests: accessApprovalRequestsContract,
  },
  options,
);

/** Route metadata: `public` routes take no access token. */
export type RouteMetadata = { public?: boolean };
