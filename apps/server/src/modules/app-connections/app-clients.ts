import type { Client as LdapClient } from "ldapts";
import type mysql from "mysql2/promise";
import type pg from "pg";
import type { Redis } from "ioredis";
import type { AppDeps } from "../../context";
import { withLdap as connectLdap } from "../connectors/ldap";
import { withMysql as connectMysql } from "../connectors/mysql";
import { withPostgres as connectPostgres } from "../connectors/postgres";
import { withRedis as connectRedis } from "../connectors/redis";
import { awsAssumeRole, type AwsTarget } from "../connectors/aws";
import { BadRequestError } from "../../errors";
import { withHttp } from "../connectors/http";
import type { Reach, Tls } from "../connectors/rules";
import type { PinnedResponse } from "../../lib/outbound";
import type {
  AwsConnectionCredentials,
  GitHubConnectionCredentials,
  LdapConnectionCredentials,
  Login,
  RedisConnectionCredentials,
  SqlConnectionCredentials,
} from "./app-connection.types";

export { queryOneStatement } from "../connectors/postgres";

/**
 * An app connection's credentials as a connectors target: TLS follows the connection's ssl* fields,
 * and `login` replaces the connection's own user and password (to check that a rotated credential
 * works). Reaching the system (outbound rule, deadline, TLS, redaction) is the connectors' rule.
 */
const tlsOf = (creds: { sslEnabled: boolean; sslRejectUnauthorized: boolean; sslCertificate?: string }): Tls =>
  creds.sslEnabled
    ? { ca: creds.sslCertificate || undefined, rejectUnauthorized: creds.sslRejectUnauthorized }
    : undefined;

const reachOf = (deps: AppDeps, login?: Login): Reach => ({
  outbound: deps.env.ALLOW_PRIVATE_OUTBOUND,
  deadlineMs: deps.env.CONNECTOR_DEADLINE_MS,
  secrets: login ? [login.password] : [],
});

const sqlTarget = (creds: SqlConnectionCredentials, login?: Login) => ({
  host: creds.host,
  port: creds.port,
  database: creds.database,
  username: login?.username ?? creds.username,
  password: login?.password ?? creds.password,
  tls: tlsOf(creds),
});

export const withPostgres = <T>(
  deps: AppDeps,
  creds: SqlConnectionCredentials,
  work: (client: pg.Client) => Promise<T>,
  login?: Login,
): Promise<T> => connectPostgres(reachOf(deps, login), sqlTarget(creds, login), work);

export const withMysql = <T>(
  deps: AppDeps,
  creds: SqlConnectionCredentials,
  work: (connection: mysql.Connection) => Promise<T>,
  login?: Login,
): Promise<T> => connectMysql(reachOf(deps, login), sqlTarget(creds, login), work);

export const withRedis = <T>(
  deps: AppDeps,
  creds: RedisConnectionCredentials,
  work: (redis: Redis) => Promise<T>,
  login?: Login,
): Promise<T> =>
  connectRedis(
    reachOf(deps, login),
    {
      host: creds.host,
      port: creds.port,
      username: login?.username ?? creds.username,
      password: login?.password ?? creds.password,
      tls: tlsOf(creds),
    },
    work,
  );

export const withLdap = <T>(
  deps: AppDeps,
  creds: LdapConnectionCredentials,
  work: (client: LdapClient) => Promise<T>,
  login?: Login,
): Promise<T> =>
  connectLdap(
    reachOf(deps, login),
    {
      url: creds.url,
      bind: { dn: login?.username ?? creds.dn, password: login?.password ?? creds.password },
      ca: creds.sslCertificate || undefined,
      rejectUnauthorized: creds.sslRejectUnauthorized,
    },
    work,
  );

/**
 * An AWS connection as a connectors target in `region`, trusting OUTBOUND_EXTRA_CA_FILE: its own key,
 * or (assume-role) the role's short-lived key, assumed with Keyward's own key and the organization's
 * id as the external id, so a role trusts one organization of the instance and no other.
 */
export const awsTargetOf = async (
  deps: AppDeps,
  connection: { orgId: string; credentials: AwsConnectionCredentials },
  region: string,
): Promise<AwsTarget> => {
  const trust = deps.outboundCa ? { ca: deps.outboundCa } : {};
  const creds = connection.credentials;
  if (creds.roleArn === undefined)
    return { region, accessKeyId: creds.accessKeyId, secretAccessKey: creds.secretAccessKey, ...trust };
  const accessKeyId = deps.env.APP_CONNECTION_AWS_ACCESS_KEY_ID;
  const secretAccessKey = deps.env.APP_CONNECTION_AWS_SECRET_ACCESS_KEY;
  if (!accessKeyId || !secretAccessKey)
    throw new BadRequestError(
      "This instance has no AWS identity to assume roles with: its operator sets APP_CONNECTION_AWS_ACCESS_KEY_ID and APP_CONNECTION_AWS_SECRET_ACCESS_KEY",
    );
  return awsAssumeRole(
    { outbound: deps.env.ALLOW_PRIVATE_OUTBOUND },
    { region, accessKeyId, secretAccessKey, ...trust },
    { roleArn: creds.roleArn, externalId: connection.orgId },
  );
};

/** GitHub's REST API: api.github.com (or api.<host>) for the cloud, https://<host>/api/v3 for a server. */
export const gitHubApiUrl = (creds: GitHubConnectionCredentials) =>
  creds.instanceType === "server" ? `https://${creds.host}/api/v3/` : `https://api.${creds.host ?? "github.com"}/`;

/** A request to GitHub's API, relative to its base (no leading slash), authenticated with the connection's token. */
export type GitHubCall = (request: { method?: string; path: string; body?: unknown }) => Promise<PinnedResponse>;

/**
 * Calls to the connection's GitHub API under the outbound rule, each with the token and GitHub's
 * media type and API version; the token never appears in an error. `deadlineMs` bounds the whole use.
 */
export const withGitHub = <T>(
  deps: AppDeps,
  creds: GitHubConnectionCredentials,
  work: (call: GitHubCall) => Promise<T>,
  deadlineMs?: number,
): Promise<T> =>
  withHttp(
    {
      outbound: deps.env.ALLOW_PRIVATE_OUTBOUND,
      deadlineMs: deadlineMs ?? deps.env.CONNECTOR_DEADLINE_MS,
      secrets: [creds.personalAccessToken],
    },
    { url: gitHubApiUrl(creds), ca: deps.outboundCa, schemes: ["https:"] },
    (call) =>
      work(({ method = "GET", path, body }) =>
        call({
          method,
          path,
          headers: {
            accept: "application/vnd.github+json",
            authorization: `Bearer ${creds.personalAccessToken}`,
            "x-github-api-version": "2022-11-28",
            "user-agent": "Keyward",
            ...(body === undefined ? {} : { "content-type": "application/json" }),
          },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
          maxBytes: 4 * 1_048_576,
        }),
      ),
  );
