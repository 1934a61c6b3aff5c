import type { Actor, RequestContext } from "../../context";
import { inTransaction } from "../../db/transaction";
import { isUuid } from "../../db/errors";
import { NotFoundError } from "../../errors";
import { generateToken, hashToken } from "../../crypto/tokens";
import { toIso } from "../../lib/dates";
import { assertCan } from "../authz/guard";
import { getOrgPermission } from "../authz/org-access";
import {
  deleteScimTokenRow,
  findScimToken,
  insertScimToken,
  listScimTokensOfOrg,
  type ScimTokenRow,
} from "./scim-token.repository";

const DAY_MS = 86_400_000;

/** Another organization's SCIM tokens are not found, never forbidden. */
const orgAbilityFor = (actor: Actor, orgId: string) => {
  if (orgId !== actor.orgId) throw new NotFoundError(`Organization with ID ${orgId} not found`);
  return getOrgPermission(actor, orgId);
};

const toScimTokenDto = (row: ScimTokenRow) => ({
  id: row.id,
  orgId: row.org_id,
  description: row.description,
  ttlDays: row.ttl_days,
  createdAt: toIso(row.created_at),
  updatedAt: toIso(row.updated_at),
});

/** The token is returned once; only its hash is stored. */
export const createScimToken = async (
  ctx: RequestContext,
  body: { organizationId: string; description: string; ttlDays: number },
) => {
  assertCan(orgAbilityFor(ctx.actor, body.organizationId), "create", "scim");
  const token = generateToken("kws");
  const expiresAt = body.ttlDays === 0 ? null : new Date(ctx.deps.clock.now() + body.ttlDays * DAY_MS);
  await inTransaction(ctx, async (trx) => {
    const row = await insertScimToken(trx, {
      orgId: body.organizationId,
      tokenHash: hashToken(token),
      description: body.description,
      ttlDays: body.ttlDays,
      expiresAt,
    });
    ctx.scope?.note({ metadata: { scimTokenId: row.id, ttlDays: body.ttlDays } });
  });
  return { scimToken: token };
};

export const listScimTokens = async (ctx: RequestContext, orgId: string) => {
  assertCan(orgAbilityFor(ctx.actor, orgId), "read", "scim");
  return (await listScimTokensOfOrg(ctx.deps.db, orgId)).map(toScimTokenDto);
};

export const deleteScimToken = async (ctx: RequestContext, tokenId: string) => {
  const row = isUuid(tokenId) ? await findScimToken(ctx.deps.db, tokenId) : undefined;
  if (!row || row.org_id !== ctx.actor.orgId) throw new NotFoundError(`SCIM token with ID ${tokenId} not found`);
  assertCan(getOrgPermission(ctx.actor, row.org_id), "delete", "scim");
  ctx.scope?.note({ metadata: { scimTokenId: row.id } });
  await inTransaction(ctx, (trx) => deleteScimTokenRow(trx, row.id));
  return toScimTokenDto(row);
};
