import { initContract } from "@ts-rest/core";
import { z } from "zod";
import { TimestampSchema, slugSchema } from "./common";
import { ProjectIdInput } from "./folders.contract";

const c = initContract();

export const APP_CONNECTION_APPS = [
  "postgres",
  "mysql",
  "redis",
  "ldap",
  "aws",
  "github",
  "gcp",
  "azure-key-vault",
] as const;
export type AppConnectionAppName = (typeof APP_CONNECTION_APPS)[number];

const host = z.string().trim().min(1, "Host required").max(255);
const port = z.coerce.number().int().min(1).max(65_535);
const secretText = z.string().min(1).max(1_024);
const pem = z
  .string()
  .max(16_384)
  .optional()
  .transform((value) => (value ? value : undefined));
const tls = {
  sslEnabled: z.boolean().default(false),
  sslRejectUnauthorized: z.boolean().default(true),
  sslCertificate: pem,
};

const SqlCredentials = z.object({
  host,
  port,
  database: z.string().trim().min(1, "Database required").max(255),
  username: z.string().trim().min(1, "Username required").max(255),
  password: secretText,
  ...tls,
});
const RedisCredentials = z.object({
  host,
  port,
  username: z.string().trim().min(1).max(255).default("default"),
  password: secretText,
  ...tls,
});
const LdapCredentials = z.object({
  provider: z.enum(["openldap", "active-directory"]).default("openldap"),
  url: z
    .string()
    .trim()
    .max(1_024)
    .refine((v) => /^ldaps?:\/\/[^\s/]+/i.test(v), "The URL must start with ldap:// or ldaps://"),
  dn: z.string().trim().min(1, "DN required").max(1_024),
  password: secretText,
  sslRejectUnauthorized: z.boolean().default(true),
  sslCertificate: pem,
});

/** An AWS IAM user's access key; the key id is shown, the secret never. */
const AwsAccessKeyCredentials = z.object({
  accessKeyId: z.string().trim().min(1, "Access Key ID required").max(128),
  secretAccessKey: z.string().trim().min(1, "Secret Access Key required").max(1_024),
});

/**
 * An IAM role of the organization's account that Keyward's own AWS identity assumes, with the
 * organization's id as the external id (so another organization of the instance cannot name the same
 * role). The ARN is not answered.
 */
const AwsAssumeRoleCredentials = z.object({
  roleArn: z
    .string()
    .trim()
    .max(2_048)
    .regex(/^arn:aws[a-z-]*:iam::\d{12}:role\/[\w+=,.@/-]{1,512}$/, "Invalid IAM role ARN"),
});

/**
 * A GitHub personal access token, for github.com (`cloud`) or a GitHub Enterprise Server (`server`,
 * whose API is at https://<host>/api/v3; the host may carry a port).
 */
const GitHubPatCredentials = z
  .object({
    personalAccessToken: z.string().trim().min(1, "Personal Access Token required").max(1_024),
    instanceType: z.enum(["cloud", "server"]).default("cloud"),
    host: z
      .string()
      .trim()
      .max(255)
      .regex(/^[a-zA-Z0-9.-]+(:\d{1,5})?$/, "Host must be a host name, optionally with a port")
      .optional(),
  })
  .refine((c) => c.instanceType === "cloud" || c.host, {
    message: "Host is required for GitHub Enterprise Server",
    path: ["host"],
  });

const parsedJson = (value: unknown) => {
  if (typeof value !== "string") return value;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return value;
  }
};

/**
 * A Google service account's key file (as downloaded, or its JSON text); what is kept of it: the
 * account's e-mail and project, the key and its id. The e-mail and project are shown, the key never.
 */
const GcpServiceAccountCredentials = z
  .object({
    serviceAccountKey: z.preprocess(
      parsedJson,
      z.object({
        type: z.literal("service_account", { message: "Not a service account key file" }).optional(),
        client_email: z.string().trim().email("The key file has no client_email").max(320),
        private_key: z
          .string()
          .max(8_192)
          .refine((v) => v.includes("PRIVATE KEY"), "The key file has no private_key"),
        private_key_id: z.string().trim().max(128).optional(),
        project_id: z.string().trim().max(128).optional(),
      }),
    ),
  })
  .transform(({ serviceAccountKey: key }) => ({
    clientEmail: key.client_email,
    privateKey: key.private_key,
    ...(key.private_key_id ? { privateKeyId: key.private_key_id } : {}),
    ...(key.project_id ? { projectId: key.project_id } : {}),
  }));

/** A Microsoft Entra application's client secret; the tenant and client ids are shown, the secret never. */
const AzureClientSecretCredentials = z.object({
  tenantId: z.string().trim().uuid("Tenant ID must be a UUID"),
  clientId: z.string().trim().uuid("Client ID must be a UUID"),
  clientSecret: z.string().trim().min(1, "Client secret required").max(1_024),
});

const APPS = {
  postgres: { name: "PostgreSQL", method: "username-and-password", credentials: SqlCredentials },
  mysql: { name: "MySQL", method: "username-and-password", credentials: SqlCredentials },
  redis: { name: "Redis", method: "username-and-password", credentials: RedisCredentials },
  ldap: { name: "LDAP", method: "simple-bind", credentials: LdapCredentials },
  aws: { name: "AWS", method: "access-key", credentials: AwsAccessKeyCredentials },
  github: { name: "GitHub", method: "pat", credentials: GitHubPatCredentials },
  gcp: { name: "GCP", method: "service-account-key", credentials: GcpServiceAccountCredentials },
  "azure-key-vault": { name: "Azure Key Vault", method: "client-secret", credentials: AzureClientSecretCredentials },
} as const;

/** Each app's display name and the one way of signing in Keyward takes for it. */
export const APP_CONNECTION_OPTIONS = Object.entries(APPS).map(([app, { name, method }]) => ({
  app: app as AppConnectionAppName,
  name,
  methods: app === "aws" ? [method, "assume-role"] : [method],
}));

/** A connection as answered: its credentials without the password, never anything secret. */
export const AppConnectionSchema = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  version: z.number().int(),
  orgId: z.string(),
  projectId: z.string().nullable(),
  app: z.string(),
  method: z.string(),
  credentials: z.record(z.unknown()),
  credentialsHash: z.string(),
  isPlatformManagedCredentials: z.boolean(),
  gatewayId: z.string().nullable(),
  createdAt: TimestampSchema,
  updatedAt: TimestampSchema,
});
export type AppConnection = z.infer<typeof AppConnectionSchema>;

const ConnectionParams = z.object({ connectionId: z.string().uuid() });
const Wrapped = z.object({ appConnection: AppConnectionSchema });
const ProjectQuery = z.object({ projectId: ProjectIdInput.optional() });

const routesOf = <A extends AppConnectionAppName>(app: A) => {
  const { name, method, credentials } = APPS[app];
  const base = `/api/v1/app-connections/${app}`;
  return c.router({
    list: {
      method: "GET",
      path: base,
      query: ProjectQuery,
      responses: { 200: z.object({ appConnections: z.array(AppConnectionSchema) }) },
      summary: `The ${name} connections the caller may read or use (the organization's, or a project's with projectId); one the caller may only use is named without its credentials`,
    },
    available: {
      method: "GET",
      path: `${base}/available`,
      query: ProjectQuery,
      responses: {
        200: z.object({
          appConnections: z.array(
            z.object({
              app: z.string(),
              name: z.string(),
              id: z.string(),
              projectId: z.string().nullable(),
              orgId: z.string(),
            }),
          ),
        }),
      },
      summary: `The ${name} connections the caller may use`,
    },
    get: {
      method: "GET",
      path: `${base}/:connectionId`,
      pathParams: ConnectionParams,
      responses: { 200: Wrapped },
      summary: `One ${name} connection`,
    },
    getByName: {
      method: "GET",
      path: `${base}/connection-name/:connectionName`,
      pathParams: z.object({ connectionName: z.string().trim().min(1).max(64) }),
      query: ProjectQuery,
      responses: { 200: Wrapped },
      summary: `One ${name} connection by name`,
    },
    create: {
      method: "POST",
      path: base,
      body: z.object({
        name: slugSchema({ max: 64, field: "Name" }),
        description: z.string().trim().max(256).nullable().optional(),
        method: z.literal(method).default(method as never),
        credentials,
        isPlatformManagedCredentials: z.boolean().default(false),
        gatewayId: z.string().uuid().nullable().optional(),
        projectId: ProjectIdInput.optional(),
      }),
      responses: { 200: Wrapped },
      summary: `Create a ${name} connection; Keyward connects with it first and refuses it (400) when that fails`,
    },
    update: {
      method: "PATCH",
      path: `${base}/:connectionId`,
      pathParams: ConnectionParams,
      body: z.object({
        name: slugSchema({ max: 64, field: "Name" }).optional(),
        description: z.string().trim().max(256).nullable().optional(),
        credentials: credentials.optional(),
        isPlatformManagedCredentials: z.boolean().optional(),
        gatewayId: z.string().uuid().nullable().optional(),
      }),
      responses: { 200: Wrapped },
      summary: `Change a ${name} connection; new credentials are checked by connecting`,
    },
    delete: {
      method: "DELETE",
      path: `${base}/:connectionId`,
      pathParams: ConnectionParams,
      body: c.noBody(),
      responses: { 200: Wrapped },
      summary: `Delete a ${name} connection (refused while a rotation uses it)`,
    },
  });
};

/** AWS signs in with an access key (the default) or by assuming a role of the organization's account. */
const awsRoutes = () => {
  const routes = routesOf("aws");
  return c.router({
    ...routes,
    create: {
      ...routes.create,
      body: z.union([
        routes.create.body,
        routes.create.body.extend({ method: z.literal("assume-role"), credentials: AwsAssumeRoleCredentials }),
      ]),
    },
    update: {
      ...routes.update,
      body: routes.update.body.extend({
        credentials: z.union([AwsAccessKeyCredentials, AwsAssumeRoleCredentials]).optional(),
      }),
    },
  });
};

export const appConnectionsContract = c.router({
  postgres: routesOf("postgres"),
  mysql: routesOf("mysql"),
  redis: routesOf("redis"),
  ldap: routesOf("ldap"),
  aws: awsRoutes(),
  github: routesOf("github"),
  gcp: routesOf("gcp"),
  azureKeyVault: routesOf("azure-key-vault"),
  options: {
    method: "GET",
    path: "/api/v1/app-connections/options",
    responses: {
      200: z.object({
        appConnectionOptions: z.array(z.object({ name: z.string(), app: z.string(), methods: z.array(z.string()) })),
      }),
    },
    summary: "The apps Keyward connects to and how each signs in",
  },
  listAll: {
    method: "GET",
    path: "/api/v1/app-connections",
    query: ProjectQuery,
    responses: { 200: z.object({ appConnections: z.array(AppConnectionSchema) }) },
    summary: "Every connection of every app the caller may read or use (named only when it may only be used)",
  },
});
