import { inTransaction } from "../../../db/transaction";
import type { PublicContext } from "../../../context";
import { isUuid } from "../../../db/errors";
import { NotFoundError } from "../../../errors";
import { failingIfRemovedMeanwhile, loginResponse } from "../shared/login-common";
import { openSecret } from "../shared/method-config";
import { findOidcLoginConfig, insertTokenClaims } from "./oidc-auth.repository";
import { kidOf } from "../../connectors/oidc-discovery";
import { checkBoundClaims, fetchProviderKeys, verifyProviderJwt } from "./oidc-verify";

/**
 * Log in with a JWT issued by the configured provider: keys from its discovery document, then
 * signature, issuer, subject, audiences and claims. Mapped claims are stored with the token.
 */
export const loginWithOidc = failingIfRemovedMeanwhile(
  async (ctx: PublicContext, body: { identityId: string; jwt: string }) => {
    const config = isUuid(body.identityId) ? await findOidcLoginConfig(ctx.deps.db, body.identityId) : undefined;
    if (!config) throw new NotFoundError("OIDC auth method not found for identity, did you configure OIDC auth?");

    const caCert = openSecret(ctx, config.id, "oidc-ca-cert", config.encrypted_ca_cert) || undefined;
    const jwks = await fetchProviderKeys(ctx.deps, config.oidc_discovery_url, { caCert, kid: kidOf(body.jwt) });
    const claims = await verifyProviderJwt(body.jwt, jwks, config.bound_issuer);
    const mapped = checkBoundClaims(claims, {
      boundSubject: config.bound_subject,
      boundAudiences: config.bound_audiences,
      boundClaims: config.bound_claims,
      claimMetadataMapping: config.claim_metadata_mapping,
    });

    return inTransaction(ctx, async (trx) => {
      const { response, tokenId } = await loginResponse(trx, config);
      if (Object.keys(mapped).length > 0) await insertTokenClaims(trx, tokenId, "oidc-auth", mapped);
      return response;
    });
  },
);
