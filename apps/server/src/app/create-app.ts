import { appConnectionsRouter } from "../modules/app-connections/app-connections.router";
import { secretSyncsRouter } from "../modules/secret-syncs/secret-syncs.router";
import { secretRotationsRouter } from "../modules/secret-rotations/secret-rotations.router";
import {
  secretApprovalPoliciesRouter,
  secretApprovalRequestsRouter,
} from "../modules/approvals/secret-changes/secret-approvals.router";
import { eventsRouter } from "../modules/events/events.router";
import express, { type Express } from "express";
import { createExpressEndpoints, initServer } from "@ts-rest/express";
import { contract } from "@keyward/contract";
import type { AppDeps } from "../context";
import { errorHandler, notFoundHandler } from "./error-handler";
import { webConsole } from "./web-console";
import { accessTokensRouter } from "../modules/access-tokens/access-tokens.router";
import { tokenAuthRouter } from "../modules/auth-methods/token/token-auth.router";
import { gcpAuthRouter } from "../modules/auth-methods/gcp/gcp-auth.router";
import { jwtAuthRouter } from "../modules/auth-methods/jwt/jwt-auth.router";
import { awsAuthRouter } from "../modules/auth-methods/aws/aws-auth.router";
import { azureAuthRouter } from "../modules/auth-methods/azure/azure-auth.router";
import { kubernetesAuthRouter } from "../modules/auth-methods/kubernetes/kubernetes-auth.router";
import { ldapAuthRouter } from "../modules/auth-methods/ldap/ldap-auth.router";
import { oidcAuthRouter } from "../modules/auth-methods/oidc/oidc-auth.router";
import { universalAuthRouter } from "../modules/auth-methods/universal/universal-auth.router";
import { systemRouter } from "../modules/bootstrap/system.router";
import { identitiesRouter, projectIdentitiesRouter } from "../modules/identities/identities.router";
import { projectsRouter } from "../modules/projects/projects.router";
import { rolesRouter } from "../modules/roles/roles.router";
import { privilegesRouter } from "../modules/privileges/privileges.router";
import { foldersRouter } from "../modules/folders/folders.router";
import { secretImportsRouter } from "../modules/secret-imports/secret-imports.router";
import { projectTemplatesRouter } from "../modules/project-templates/project-templates.router";
import { groupsRouter, projectGroupsRouter } from "../modules/groups/groups.router";
import { gatewaysRouter } from "../modules/gateways/gateways.router";
import { ACME_MOUNT, acmeRouter } from "../modules/pki/acme/acme.router";
import { EST_MOUNT, estRouter } from "../modules/pki/est/est.router";
import { OCSP_MOUNT, ocspRouter } from "../modules/pki/ocsp/ocsp.router";
import { SCEP_MOUNT, scepRouter } from "../modules/pki/scep/scep.router";
import { certificateAuthoritiesRouter } from "../modules/pki/certificate-authorities.router";
import { certificateProfilesRouter } from "../modules/pki/certificate-profiles.router";
import { certificatesRouter } from "../modules/pki/certificates.router";
import { dynamicSecretLeasesRouter, dynamicSecretsRouter } from "../modules/dynamic-secrets/dynamic-secrets.router";
import { secretsV3Router, secretsV4Router } from "../modules/secrets/secrets.router";
import { secretsMoveRouter } from "../modules/secrets/move/move.router";
import { secretReferencesRouter } from "../modules/secrets/references/references.router";
import { secretTagsRouter } from "../modules/secrets/tags/tags.router";
import { secretSearchRouter } from "../modules/secrets/search/search.router";
import { secretVersionsRouter } from "../modules/secrets/versions/versions.router";
import { pitRouter, secretSnapshotsRouter } from "../modules/secrets/commits/commits.router";
import { sshRouter } from "../modules/ssh/ssh.router";
import { rootKeysRouter } from "../modules/root-keys/root-keys.router";
import { kmsRouter } from "../modules/kms/kms.router";
import { auditLogsRouter } from "../modules/audit/audit.router";
import { auditLogStreamsRouter } from "../modules/audit/streams/streams.router";
import { userPrivilegesRouter, usersRouter } from "../modules/users/users.router";
import { SSO_MOUNT, ssoBrowserRoutes, ssoRouter } from "../modules/sso/sso.router";
import { sessionsRouter } from "../modules/sessions/sessions.router";
import { scimTokensRouter } from "../modules/scim/scim-tokens.router";
import { SCIM_MOUNT, scimRoutes } from "../modules/scim/scim.router";
import {
  accessApprovalPoliciesRouter,
  accessApprovalRequestsRouter,
} from "../modules/approvals/access-requests/access-approvals.router";
import { bucketedRoutes } from "./route-buckets";
import { requestFront } from "./request-front";
import { ocspRateLimit } from "./rate-limit";
import { routeEntry } from "./route-entry";
import { loginForms } from "./login-forms";

const s = initServer();

const smallJson = express.json({ limit: "1mb" });
// A secret value may be 1 MiB (a larger one is a 422 naming the bound), and a batch holds many.
const largeJson = express.json({ limit: "16mb" });
const LARGE_BODIES = /^\/api\/v[34]\/secrets(\/|$)/i;

/** JSON bodies, with the secret routes' larger bound (the parser passes requests without a body straight on). */
const jsonBodies: express.RequestHandler = (req, res, next) =>
  (LARGE_BODIES.test(req.path) ? largeJson : smallJson)(req, res, next);

/**
 * `res.json` for this app: the body serialized and written with its length, without Express's
 * generic `send` (which re-parses the content type to add a charset and runs ETag and freshness
 * checks Keyward does not use: the v4 secret reads set and check their own ETag). 204 and 304
 * answers carry no body; node leaves the body off a HEAD answer itself.
 */
function sendJson(this: express.Response, body: unknown) {
  const json = JSON.stringify(body) as string | undefined;
  if (json === undefined || this.statusCode === 204 || this.statusCode === 304) {
    this.end();
    return this;
  }
  if (!this.hasHeader("Content-Type")) this.setHeader("Content-Type", "application/json; charset=utf-8");
  this.setHeader("Content-Length", Buffer.byteLength(json));
  this.end(json);
  return this;
}

/** The whole API as an Express app. Never listens: main.ts and the tests do. */
export const createApp = (deps: AppDeps): Express => {
  const app = express();
  app.disable("x-powered-by");
  app.set("etag", false);
  app.set("trust proxy", deps.env.TRUST_PROXY.length > 0 ? deps.env.TRUST_PROXY : false);
  app.response.json = sendJson;
  app.use(requestFront(deps));
  // Enrollment protocols with bodies of their own (JWS, base64 PKCS#10), before the JSON parser.
  app.use(ACME_MOUNT, acmeRouter(deps));
  app.use(EST_MOUNT, estRouter(deps));
  // Each CA's OCSP responder (DER requests and responses), beside its CRL route; other CA routes pass on.
  app.use(OCSP_MOUNT, ocspRouter(deps, ocspRateLimit(deps)));
  app.use(SCEP_MOUNT, scepRouter(deps));
  app.use(SSO_MOUNT, ssoBrowserRoutes(deps));
  // SCIM 2.0 for identity providers: its own bearer tokens, media type and error bodies.
  app.use(SCIM_MOUNT, scimRoutes(deps));
  app.use(jsonBodies);
  app.use(loginForms(contract));

  // Built, and its generator loaded, on the first request for it: a worker that never serves it never holds it.
  let openApi: unknown;
  app.get("/api/docs/openapi.json", (_req, res, next) => {
    void (async () => {
      openApi ??= (await import("@keyward/contract/openapi")).buildOpenApiDocument();
      res.json(openApi);
    })().catch(next);
  });

  const router = s.router(contract, {
    system: systemRouter(deps),
    rootKeys: rootKeysRouter(deps),
    identities: identitiesRouter(deps),
    // Before project identities: /api/v1/projects/slug/:slug must win over /api/v1/projects/:projectId/identities.
    projects: projectsRouter(deps),
    projectIdentities: projectIdentitiesRouter(deps),
    roles: rolesRouter(deps),
    privileges: privilegesRouter(deps),
    folders: foldersRouter(deps),
    secretImports: secretImportsRouter(deps),
    projectTemplates: projectTemplatesRouter(deps),
    groups: groupsRouter(deps),
    projectGroups: projectGroupsRouter(deps),
    tokenAuth: tokenAuthRouter(deps),
    accessTokens: accessTokensRouter(deps),
    universalAuth: universalAuthRouter(deps),
    ldapAuth: ldapAuthRouter(deps),
    kubernetesAuth: kubernetesAuthRouter(deps),
    oidcAuth: oidcAuthRouter(deps),
    gcpAuth: gcpAuthRouter(deps),
    jwtAuth: jwtAuthRouter(deps),
    awsAuth: awsAuthRouter(deps),
    azureAuth: azureAuthRouter(deps),
    gateways: gatewaysRouter(deps),
    certificateAuthorities: certificateAuthoritiesRouter(deps),
    certificateProfiles: certificateProfilesRouter(deps),
    certificates: certificatesRouter(deps),
    dynamicSecrets: dynamicSecretsRouter(deps),
    dynamicSecretLeases: dynamicSecretLeasesRouter(deps),
    secretsMove: secretsMoveRouter(deps),
    secretReferences: secretReferencesRouter(deps),
    secretsV3: secretsV3Router(deps),
    secretsV4: secretsV4Router(deps),
    secretTags: secretTagsRouter(deps),
    secretSearch: secretSearchRouter(deps),
    secretVersions: secretVersionsRouter(deps),
    pit: pitRouter(deps),
    secretSnapshots: secretSnapshotsRouter(deps),
    ssh: sshRouter(deps),
    kms: kmsRouter(deps),
    auditLogs: auditLogsRouter(deps),
    auditLogStreams: auditLogStreamsRouter(deps),
    users: usersRouter(deps),
    sso: ssoRouter(deps),
    sessions: sessionsRouter(deps),
    userPrivileges: userPrivilegesRouter(deps),
    scim: scimTokensRouter(deps),
    events: eventsRouter(deps),
    secretRotations: secretRotationsRouter(deps),
    appConnections: appConnectionsRouter(deps),
    secretSyncs: secretSyncsRouter(deps),
    secretApprovalPolicies: secretApprovalPoliciesRouter(deps),
    secretApprovalRequests: secretApprovalRequestsRouter(deps),
    accessApprovalPolicies: accessApprovalPoliciesRouter(deps),
    accessApprovalRequests: accessApprovalRequestsRouter(deps),
  });
  const { routes, dispatch } = bucketedRoutes(app);
  app.use(dispatch);
  createExpressEndpoints(contract, router, routes, {
    logInitialization: false,
    jsonQuery: false,
    responseValidation: true,
    globalMiddleware: [routeEntry(deps, contract)],
    requestValidationErrorHandler: (error, _req, _res, next) => next(error),
  });

  const consolePages = webConsole(deps.env.WEB_DIST_DIR, deps.logger);
  if (consolePages) app.use(consolePages);
  app.use(notFoundHandler);
  app.use(errorHandler(deps.logger));
  return app;
};
