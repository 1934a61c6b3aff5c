import { inTransaction } from "../../../db/transaction";
import type { PublicContext } from "../../../context";
import { NotFoundError, UnauthorizedError } from "../../../errors";
import { authenticateLdapUser, type LdapUser } from "./ldap-client";
import { findLdapLoginConfig } from "./ldap-auth.repository";
import { openLdapSecrets } from "./ldap-auth.service";
import { beginLogin, failLogin, failingIfRemovedMeanwhile, loginResponse, succeedLogin } from "../shared/login-common";

/** Every required field must be present on the user with one of its comma-separated values. */
const hasAllowedFields = (user: LdapUser, allowed: { key: string; value: string }[] | null) =>
  (allowed ?? []).every((field) => {
    const values = user[field.key];
    if (!values || values.length === 0) return false;
    const accepted = field.value.split(",");
    return values.some((value) => accepted.includes(value));
  });

/**
 * Log in with an LDAP username and password: search the user with the service account, bind as the
 * user, check the allowed fields. Wrong credentials count towards the per-username lockout.
 */
export const loginWithLdap = failingIfRemovedMeanwhile(
  async (ctx: PublicContext, body: { identityId: string; username: string; password: string }) => {
    const config = await findLdapLoginConfig(ctx.deps.db, body.identityId);
    if (!config) throw new NotFoundError(`LDAP auth with ID '${body.identityId}' not found`);
    const attempt = await beginLogin(ctx, config, body.username.trim().toLowerCase());

    const secrets = openLdapSecrets(ctx, config.id, config);
    let user: LdapUser | null;
    try {
      user = await authenticateLdapUser(
        {
          url: config.url,
          bindDN: secrets.bindDN,
          bindPass: secrets.bindPass,
          caCert: secrets.caCert,
          searchBase: config.search_base,
          searchFilter: config.search_filter,
        },
        ctx.deps.env.ALLOW_PRIVATE_OUTBOUND,
        body.username,
        body.password,
      );
    } catch (error) {
      // The directory is unreachable or refused the service account: not the caller's failure.
      ctx.deps.logger.warn(
        { identityId: config.identity_id, reason: (error as Error).name },
        "LDAP login could not reach the directory",
      );
      throw new UnauthorizedError("LDAP authentication failed");
    }
    if (!user || !hasAllowedFields(user, config.allowed_fields)) return failLogin(ctx, attempt);

    await succeedLogin(ctx, attempt);
    return inTransaction(ctx, async (trx) => (await loginResponse(trx, config)).response);
  },
);
