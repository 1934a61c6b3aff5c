import { createKeywardClient, ok, type KeywardClient } from "@keyward/client";

export type Seeded = {
  clientId: string;
  clientSecret: string;
  token: string;
  /** The instance admin identity's token (the bootstrap answer's): it creates organizations. */
  rootToken: string;
  projectId: string;
  projectSlug: string;
  botIdentityId: string;
  botName: string;
};

const HOUR = 3_600_000;

const secretManagerData = async (admin: KeywardClient, targetDb: { host: string; port: number; password: string }) => {
  const { project } = await ok(
    admin.projects.create({ body: { projectName: "Payments API", type: "secret-manager" } }),
  );
  const where = (environment: string, secretPath = "/") => ({ workspaceId: project.id, environment, secretPath });
  const secret = (name: string, value: string, comment = "", environment = "dev", secretPath = "/") =>
    ok(
      admin.secretsV3.create({
        params: { secretName: name },
        body: { ...where(environment, secretPath), secretValue: value, secretComment: comment },
      }),
    );
  await secret("DATABASE_URL", "postgres://payments@db.internal/payments", "primary database");
  await secret("STRIPE_KEY", "sk_test_first", "payment provider key");
  await ok(
    admin.secretsV3.update({
      params: { secretName: "STRIPE_KEY" },
      body: { ...where("dev"), secretValue: "sk_test_rotated" },
    }),
  );
  await secret("LOG_LEVEL", "debug");
  await ok(admin.folders.create({ body: { workspaceId: project.id, environment: "dev", path: "/", name: "backend" } }));
  await secret("WORKER_THREADS", "4", "", "dev", "/backend");
  await secret("SHARED_TOKEN", "from-staging", "", "staging");
  await secret("LOG_LEVEL", "info", "", "staging");
  await ok(
    admin.secretImports.create({
      body: { workspaceId: project.id, environment: "dev", path: "/", import: { environment: "staging", path: "/" } },
    }),
  );
  await ok(
    admin.dynamicSecrets.create({
      body: {
        projectSlug: project.slug,
        environmentSlug: "dev",
        path: "/",
        name: "orders-db",
        provider: {
          type: "sql-database",
          inputs: {
            client: "postgres",
            host: targetDb.host,
            port: targetDb.port,
            database: "postgres",
            username: "postgres",
            password: targetDb.password,
          },
        },
        defaultTTL: "1h",
        maxTTL: "1d",
      },
    }),
  );
  return project;
};

const certificateData = async (admin: KeywardClient) => {
  const { project } = await ok(
    admin.projects.create({ body: { projectName: "Edge certificates", type: "cert-manager" } }),
  );
  const { certificateAuthority: ca } = await ok(
    admin.certificateAuthorities.create({
      body: {
        projectId: project.id,
        name: "edge-root",
        configuration: {
          type: "root",
          commonName: "Edge Root CA",
          organization: "Keyward",
          keyAlgorithm: "EC_prime256v1",
        },
      },
    }),
  );
  for (const slug of ["web-servers", "internal-mtls"]) {
    const { certificateProfile } = await ok(
      admin.certificateProfiles.create({
        body: { projectId: project.id, caId: ca.id, slug, enrollmentType: "api", issuerType: "ca" },
      }),
    );
    const count = slug === "web-servers" ? 3 : 1;
    for (let i = 0; i < count; i += 1) {
      const issued = await ok(
        admin.certificates.issue({ body: { profileId: certificateProfile.id, commonName: `host${i}.example.com` } }),
      );
      // One revoked certificate, so the chart shows more than one kind.
      if (i === count - 1 && count > 1) {
        await ok(admin.certificates.revoke({ params: { certificateId: issued.certificateId }, body: {} }));
      }
    }
  }
};

/**
 * The world the console tests and screenshots look at, made through the public API: a signed-in
 * admin identity with Universal Auth, projects, secrets, imports, a dynamic secret, privileges,
 * certificates, a group and a template.
 */
export const seed = async (baseUrl: string, targetDb: { host: string; port: number; password: string }) => {
  const anonymous = createKeywardClient({ baseUrl });
  const boot = await ok(
    anonymous.system.bootstrap({
      body: { email: "admin@keyward.test", password: "console-tests-password", organization: "Acme" },
    }),
  );
  const root = createKeywardClient({ baseUrl, token: boot.identity.credentials.token });
  const orgId = boot.organization.id;
  const { identity } = await ok(
    root.identities.create({ body: { name: "console-admin", organizationId: orgId, role: "admin" } }),
  );
  const ua = await ok(root.universalAuth.attach({ params: { identityId: identity.id }, body: {} }));
  const { clientSecret } = await ok(
    root.universalAuth.createClientSecret({ params: { identityId: identity.id }, body: { description: "console" } }),
  );
  const clientId = ua.identityUniversalAuth.clientId;
  const login = await ok(anonymous.universalAuth.login({ body: { clientId, clientSecret } }));
  const admin = createKeywardClient({ baseUrl, token: login.accessToken });

  const project = await secretManagerData(admin, targetDb);
  const { identity: bot } = await ok(
    admin.identities.create({ body: { name: "deploy-bot", organizationId: orgId, role: "no-access" } }),
  );
  await ok(admin.tokenAuth.attach({ params: { identityId: bot.id }, body: {} }));
  await ok(admin.tokenAuth.createToken({ params: { identityId: bot.id }, body: { name: "ci" } }));
  await ok(
    admin.projects.addIdentityMembership({
      params: { projectId: project.id, identityId: bot.id },
      body: { role: "viewer" },
    }),
  );
  await ok(
    admin.privileges.v2.create({
      body: {
        identityId: bot.id,
        projectId: project.id,
        slug: "release-window",
        permissions: [{ subject: "secrets", action: ["edit"] }],
        type: {
          isTemporary: true,
          temporaryMode: "relative",
          temporaryRange: "2h",
          temporaryAccessStartTime: new Date(Date.now() - 30 * HOUR).toISOString(),
        },
      },
    }),
  );
  await certificateData(admin);
  await ok(admin.groups.create({ body: { name: "Platform team", slug: "platform-team", role: "member" } }));
  await ok(
    admin.projectTemplates.create({
      body: {
        name: "service-template",
        description: "Environments and roles for a new service",
        type: "secret-manager",
        environments: [
          { name: "Development", slug: "dev", position: 1 },
          { name: "Production", slug: "prod", position: 2 },
        ],
      },
    }),
  );
  return {
    clientId,
    clientSecret,
    token: login.accessToken,
    rootToken: boot.identity.credentials.token,
    projectId: project.id,
    projectSlug: project.slug,
    botIdentityId: bot.id,
    botName: bot.name,
  } satisfies Seeded;
};
