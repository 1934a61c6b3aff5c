import { Attribute, Change } from "ldapts";
import pg from "pg";
import type { RequestContext } from "../../context";
import { AppError, BadRequestError } from "../../errors";
import { awsCallerIdentity } from "../connectors/aws";
import { generateAlphanumericPassword, redactSecrets } from "../connectors/credentials";
import { awsTargetOf, withGitHub, withLdap, withMysql, withPostgres, withRedis } from "./app-clients";
import { azureAccessToken, gcpAccessToken } from "./cloud-tokens";
import { SECRET_CREDENTIALS, type UsableConnection } from "./app-connection.types";

/** The connection's secret fields' values, to mask in any message. */
export const secretsOf = (connection: UsableConnection) =>
  (SECRET_CREDENTIALS[connection.app] as readonly string[]).map(
    (field) => (connection.credentials as Record<string, unknown>)[field] as string | undefined,
  );

const messageOf = (error: unknown, connection: UsableConnection) =>
  redactSecrets(error instanceof Error ? error.message : String(error), secretsOf(connection));

/** The AWS region connections are checked in, as STS answers for every region's keys. */
const CHECK_REGION = "us-east-1";

/**
 * Connects with the credentials and runs a trivial command (a database's `select 1`, a directory
 * bind, AWS's GetCallerIdentity, GitHub's current user); 400 with the cause, secrets masked, when it
 * fails.
 */
export const validateConnection = async (ctx: RequestContext, connection: UsableConnection) => {
  const { deps } = ctx;
  try {
    if (connection.app === "postgres") await withPostgres(deps, connection.credentials, (c) => c.query("select 1"));
    else if (connection.app === "mysql") await withMysql(deps, connection.credentials, (c) => c.query("select 1"));
    else if (connection.app === "redis") await withRedis(deps, connection.credentials, (r) => r.ping());
    else if (connection.app === "ldap") await withLdap(deps, connection.credentials, async () => undefined);
    else if (connection.app === "aws")
      await awsCallerIdentity(
        { outbound: deps.env.ALLOW_PRIVATE_OUTBOUND },
        await awsTargetOf(deps, connection, CHECK_REGION),
      );
    else if (connection.app === "gcp") await gcpAccessToken(deps, connection.credentials);
    else if (connection.app === "azure-key-vault") await azureAccessToken(deps, connection.credentials);
    else if (connection.app === "github") {
      const status = await withGitHub(
        deps,
        connection.credentials,
        async (call) => (await call({ path: "user" })).status,
      );
      if (status !== 200)
        throw new BadRequestError("Unable to validate Personal Access Token: verify token has proper permissions");
    }
  } catch (error) {
    if (error instanceof AppError) throw error;
    throw new BadRequestError(`Unable to validate connection: ${messageOf(error, connection)}`);
  }
};

/** Platform-managed credentials: the connection's own user gets a password only Keyward knows. */
export const takeOverPassword = (ctx: RequestContext, connection: UsableConnection): Promise<string> =>
  setOwnPassword(ctx, connection).catch((error: unknown) => {
    if (error instanceof AppError) throw error;
    throw new BadRequestError(`Unable to take over the connection's credentials: ${messageOf(error, connection)}`);
  });

const setOwnPassword = async (ctx: RequestContext, connection: UsableConnection): Promise<string> => {
  const password = generateAlphanumericPassword(32);
  const { deps } = ctx;
  if (connection.app === "postgres")
    await withPostgres(deps, connection.credentials, (c) =>
      c.query(
        `alter user ${pg.escapeIdentifier(connection.credentials.username)} with password ${pg.escapeLiteral(password)}`,
      ),
    );
  else if (connection.app === "mysql")
    await withMysql(deps, connection.credentials, (c) =>
      c.query("alter user current_user() identified by ?", [password]),
    );
  else if (connection.app === "redis")
    await withRedis(deps, connection.credentials, (r) =>
      r.call("ACL", "SETUSER", connection.credentials.username, "resetpass", `>${password}`),
    );
  else if (connection.app === "ldap")
    await withLdap(deps, connection.credentials, (c) =>
      c.modify(
        connection.credentials.dn,
        new Change({ operation: "replace", modification: new Attribute({ type: "userPassword", values: [password] }) }),
      ),
    );
  else throw new BadRequestError(`Platform managed credentials are not supported for ${connection.app} connections`);
  return password;
};
