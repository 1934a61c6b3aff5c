import type { Database } from "../../../db/database";

/** What a workload login verified, kept beside its token for `{{identity.auth.<method>.claims.*}}` templates. */
export const insertVerifiedClaims = (
  db: Database,
  tokenId: string,
  authMethod: string,
  claims: Record<string, unknown>,
) =>
  db
    .insertInto("identity_access_token_claims")
    .values({ token_id: tokenId, auth_method: authMethod, claims: JSON.stringify(claims) })
    .execute();
