import { inTransaction } from "../../../db/transaction";
import type { PublicContext } from "../../../context";
import { hashToken } from "../../../crypto/tokens";
import { isUuid } from "../../../db/errors";
import { ForbiddenError, UnauthorizedError } from "../../../errors";
import { isIpTrusted } from "../../../lib/ip";
import { lockAuthConfigForKeyShare } from "../shared/auth-config.repository";
import {
  INVALID_CREDENTIALS,
  beginLogin,
  failLogin,
  failingIfRemovedMeanwhile,
  loginResponse,
  succeedLogin,
} from "../shared/login-common";
import {
  findActiveClientSecretByHash,
  findUniversalAuthLoginConfig,
  revokeClientSecretRow,
  spendClientSecretUse,
} from "./universal-auth.repository";

/**
 * Exchange a client id and secret for an access token. The secret's use is spent and the token
 * written in one transaction, so parallel logins never exceed the secret's use limit.
 */
export const loginWithUniversalAuth = failingIfRemovedMeanwhile(
  async (ctx: PublicContext, body: { clientId: string; clientSecret: string }) => {
    const config = isUuid(body.clientId) ? await findUniversalAuthLoginConfig(ctx.deps.db, body.clientId) : undefined;
    if (!config) throw new UnauthorizedError(INVALID_CREDENTIALS);
    if (!isIpTrusted(ctx.clientIp, config.client_secret_trusted_ips)) {
      throw new ForbiddenError("You are not allowed to access this resource from the current IP address");
    }
    const attempt = await beginLogin(ctx, config, body.clientId.toLowerCase());

    const secret = await findActiveClientSecretByHash(ctx.deps.db, config.id, hashToken(body.clientSecret));
    if (!secret) return failLogin(ctx, attempt);
    await succeedLogin(ctx, attempt);

    if (
      secret.client_secret_ttl > 0 &&
      ctx.deps.clock.now() > new Date(secret.created_at).getTime() + secret.client_secret_ttl * 1000
    ) {
      await revokeClientSecretRow(ctx.deps.db, secret.id);
      throw new UnauthorizedError("Access denied due to expired client secret");
    }
    const issued = await inTransaction(ctx, async (trx) => {
      if (!(await lockAuthConfigForKeyShare(trx, config.id))) return null;
      if (!(await spendClientSecretUse(trx, secret.id))) return null;
      return (await loginResponse(trx, config, { clientSecretId: secret.id })).response;
    });
    if (!issued) {
      // Not spendable: its last use went to a parallel login, or it was revoked or removed meanwhile.
      if (!(await revokeClientSecretRow(ctx.deps.db, secret.id))) throw new UnauthorizedError(INVALID_CREDENTIALS);
      throw new UnauthorizedError("Access denied due to client secret usage limit reached");
    }
    return issued;
  },
);
