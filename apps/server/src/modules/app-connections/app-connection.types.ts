/** The outside systems Keyward connects to with an app connection. */
export type AppConnectionApp = "postgres" | "mysql" | "ldap" | "redis" | "aws" | "github" | "gcp" | "azure-key-vault";

/** TLS of a connection: on or off, whether the peer's certificate is checked, and an extra CA (PEM). */
type Tls = { sslEnabled: boolean; sslRejectUnauthorized: boolean; sslCertificate?: string };

export type SqlConnectionCredentials = Tls & {
  host: string;
  port: number;
  database: string;
  username: string;
  password: string;
};

export type RedisConnectionCredentials = Tls & { host: string; port: number; username: string; password: string };

export type LdapConnectionCredentials = {
  provider: "openldap" | "active-directory";
  /** ldap:// or ldaps:// */
  url: string;
  dn: string;
  password: string;
  sslRejectUnauthorized: boolean;
  sslCertificate?: string;
};

/**
 * An AWS IAM user's access key, or (method `assume-role`) a role of the organization's account that
 * Keyward's own key assumes.
 */
export type AwsConnectionCredentials =
  | { accessKeyId: string; secretAccessKey: string; roleArn?: undefined }
  | { roleArn: string; accessKeyId?: undefined; secretAccessKey?: undefined };

/** A GitHub personal access token, for github.com or a GitHub Enterprise Server at `host`. */
export type GitHubConnectionCredentials = {
  personalAccessToken: string;
  instanceType: "cloud" | "server";
  host?: string;
};

/** A Google service account's key: its e-mail, project and private key (PKCS#8 PEM). */
export type GcpConnectionCredentials = {
  clientEmail: string;
  privateKey: string;
  privateKeyId?: string;
  projectId?: string;
};

/** A Microsoft Entra application's client secret in its tenant. */
export type AzureConnectionCredentials = { tenantId: string; clientId: string; clientSecret: string };

type Base = { id: string; orgId: string; projectId: string | null; name: string };

/** A connection with its credentials opened, as the code that uses it (rotations) gets it. */
export type UsableConnection =
  | (Base & { app: "postgres" | "mysql"; credentials: SqlConnectionCredentials })
  | (Base & { app: "redis"; credentials: RedisConnectionCredentials })
  | (Base & { app: "ldap"; credentials: LdapConnectionCredentials })
  | (Base & { app: "aws"; credentials: AwsConnectionCredentials })
  | (Base & { app: "github"; credentials: GitHubConnectionCredentials })
  | (Base & { app: "gcp"; credentials: GcpConnectionCredentials })
  | (Base & { app: "azure-key-vault"; credentials: AzureConnectionCredentials });

/** Each app's stored credentials. */
type CredentialsOf = {
  postgres: SqlConnectionCredentials;
  mysql: SqlConnectionCredentials;
  redis: RedisConnectionCredentials;
  ldap: LdapConnectionCredentials;
  aws: AwsConnectionCredentials;
  github: GitHubConnectionCredentials;
  gcp: GcpConnectionCredentials;
  "azure-key-vault": AzureConnectionCredentials;
};

/** Each app's secret fields: never answered, masked in any message. */
export const SECRET_CREDENTIALS = {
  postgres: ["password"],
  mysql: ["password"],
  redis: ["password"],
  ldap: ["password"],
  aws: ["secretAccessKey"],
  github: ["personalAccessToken"],
  gcp: ["privateKey"],
  "azure-key-vault": ["clientSecret"],
} as const satisfies { [App in AppConnectionApp]: readonly (keyof CredentialsOf[App])[] };

const SHOWN_SQL = [
  "host",
  "port",
  "database",
  "username",
  "sslEnabled",
  "sslRejectUnauthorized",
  "sslCertificate",
] as const satisfies readonly (keyof SqlConnectionCredentials)[];

/**
 * What an answer may show of each app's credentials, field by field; anything not named here (a password,
 * and whatever secret a new app adds) is never answered. A new app must name its fields to compile.
 */
export const SHOWN_CREDENTIALS: {
  [App in AppConnectionApp]: readonly Exclude<keyof CredentialsOf[App], (typeof SECRET_CREDENTIALS)[App][number]>[];
} = {
  postgres: SHOWN_SQL,
  mysql: SHOWN_SQL,
  redis: ["host", "port", "username", "sslEnabled", "sslRejectUnauthorized", "sslCertificate"],
  ldap: ["provider", "url", "dn", "sslRejectUnauthorized", "sslCertificate"],
  aws: ["accessKeyId"],
  github: ["instanceType", "host"],
  gcp: ["clientEmail", "projectId", "privateKeyId"],
  "azure-key-vault": ["tenantId", "clientId"],
};

/** Other credentials to log in with over the same connection (a rotated user's). */
export type Login = { username: string; password: string };
