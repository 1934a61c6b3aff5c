import type { TokenSelf } from "@keyward/contract";
import type { RequestContext } from "../../context";
import { ForbiddenError, UnauthorizedError } from "../../errors";
import { toIso } from "../../lib/dates";
import { findTokenDetails } from "./access-token.repository";
import { toAccessTokenDto } from "./access-token.service";

const plusSeconds = (at: Date | string, seconds: number) => new Date(new Date(at).getTime() + seconds * 1000);

/** GET /api/v1/auth/token/self: what `keyward whoami` shows; the token's secret is never part of it. */
export const describeOwnToken = async (ctx: RequestContext): Promise<TokenSelf> => {
  if (ctx.actor.type === "user") {
    throw new ForbiddenError("This is a person's session, not an identity's token: GET /api/v1/user describes it");
  }
  const row = await findTokenDetails(ctx.deps.db, ctx.actor.tokenId);
  // Revoked between authentication (cached for at most a second) and this read.
  if (!row || row.is_revoked) throw new UnauthorizedError("No identity access token found");
  const { identityUAClientSecretId: _secretId, ...token } = toAccessTokenDto(row);
  const renewedAt = row.last_renewed_at ?? row.created_at;
  const maxTtl = row.access_token_period === 0 ? row.access_token_max_ttl : 0;
  return {
    identity: { id: row.identity_id, name: row.identity_name, projectId: row.identity_project_id },
    organization: { id: row.org_id, name: row.org_name, slug: row.org_slug },
    token: {
      ...token,
      expiresAt: row.access_token_ttl > 0 ? toIso(plusSeconds(renewedAt, row.access_token_ttl)) : null,
      maxExpiresAt: maxTtl > 0 ? toIso(plusSeconds(row.created_at, maxTtl)) : null,
    },
  };
};
