import { inTransaction } from "../../../db/transaction";
import { noteAudit, type RequestContext } from "../../../context";
import { NotFoundError } from "../../../errors";
import {
  findIssuedToken,
  issueAccessToken,
  listIssuedTokens,
  renameIssuedToken,
  revokeIssuedToken,
} from "../../access-tokens/access-token.service";
import { authorizeAuthMethodOperation, toAuthConfigDto } from "../shared/auth-config";
import { defineAuthMethod } from "../shared/define-auth-method";
import { requireMethodConfig } from "../shared/method-config";
import type { CommonAttachInput, CommonUpdateInput } from "../shared/method-inputs";
import { noMethodRows } from "../shared/method-repository";

const METHOD = "token-auth";
const LABEL = "token auth";

const NOT_ATTACHED = "The identity does not have Token Auth";

export const tokenAuth = defineAuthMethod<CommonAttachInput, CommonUpdateInput>()({
  spec: { method: METHOD, label: LABEL, duplicateMessage: "Failed to add Token Auth to already configured identity" },
  rows: noMethodRows,
  missing: {
    get: () => new NotFoundError("Token Auth configuration not found for identity"),
    update: NOT_ATTACHED,
    revoke: NOT_ATTACHED,
  },
  toDto: toAuthConfigDto,
  attach: { row: () => undefined },
  update: { row: () => undefined },
});

const requireConfig = (ctx: RequestContext, identityId: string) =>
  requireMethodConfig(ctx, identityId, tokenAuth.spec, NOT_ATTACHED);

export const createTokenAuthToken = async (ctx: RequestContext, identityId: string, body: { name?: string }) => {
  const identity = await authorizeAuthMethodOperation(ctx, identityId, "create-token", LABEL);
  const config = await requireConfig(ctx, identity.id);
  return inTransaction(ctx, async (trx) => {
    const issued = await issueAccessToken(trx, config, { name: body.name ?? null });
    noteAudit(ctx, { metadata: { tokenId: issued.tokenData.id } });
    return issued;
  });
};

export const listTokenAuthTokens = async (
  ctx: RequestContext,
  identityId: string,
  query: { offset: number; limit: number },
) => {
  const identity = await authorizeAuthMethodOperation(ctx, identityId, "read", LABEL);
  return { tokens: await listIssuedTokens(ctx.deps, identity.id, METHOD, query) };
};

const requireTokenOfOrg = async (ctx: RequestContext, tokenId: string) => {
  const row = await findIssuedToken(ctx.deps, ctx.actor.orgId, tokenId, METHOD);
  if (!row) throw new NotFoundError(`Token with ID ${tokenId} not found`);
  return row;
};

export const updateTokenAuthToken = async (ctx: RequestContext, tokenId: string, body: { name?: string }) => {
  const token = await requireTokenOfOrg(ctx, tokenId);
  await authorizeAuthMethodOperation(ctx, token.identity_id, "create-token", LABEL);
  noteAudit(ctx, { metadata: { identityId: token.identity_id } });
  return { token: await renameIssuedToken(ctx, token.id, body.name ?? null) };
};

export const revokeTokenAuthTokenById = async (ctx: RequestContext, tokenId: string) => {
  const token = await requireTokenOfOrg(ctx, tokenId);
  await authorizeAuthMethodOperation(ctx, token.identity_id, "revoke", LABEL);
  noteAudit(ctx, { metadata: { identityId: token.identity_id } });
  await revokeIssuedToken(ctx, token.id);
  return { message: "Successfully revoked access token" };
};
