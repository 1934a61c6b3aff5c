import type { Request } from "express";
import type { AppDeps } from "../../context";
import { hashToken } from "../../crypto/tokens";
import { auditOriginOf, type AuditOrigin } from "../audit/audit-protocol";
import { ScimError } from "./scim-protocol";
import { findScimTokenByHash } from "./scim-token.repository";

/** A SCIM request: the organization its token belongs to, the token (the audit actor) and where it came from. */
export type ScimContext = { deps: AppDeps; orgId: string; tokenId: string; origin: AuditOrigin };

const BEARER = /^Bearer\s+(kws_[\w-]{20,100})\s*$/i;

/** Only a SCIM token of the organization, unexpired and not deleted, opens the SCIM routes. */
export const authenticateScim = async (deps: AppDeps, req: Request): Promise<ScimContext> => {
  const match = BEARER.exec(req.headers.authorization ?? "");
  if (!match) throw new ScimError(401, "A SCIM token is required");
  const row = await findScimTokenByHash(deps.db, hashToken(match[1]!));
  const expired = row?.expires_at != null && new Date(row.expires_at).getTime() <= deps.clock.now();
  if (!row || expired) throw new ScimError(401, "The SCIM token is invalid or has expired");
  return { deps, orgId: row.org_id, tokenId: row.id, origin: auditOriginOf(req) };
};
