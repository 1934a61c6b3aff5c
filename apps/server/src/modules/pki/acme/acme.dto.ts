import { toIso } from "../../../lib/dates";
import type { AcmeContext } from "./acme-jws";
import type { AcmeAuthzRow, AcmeChallengeRow, AcmeOrderRow } from "./acme.repository";

export const orderUrl = (ctx: AcmeContext, orderId: string) => `${ctx.base}/orders/${orderId}`;
export const authzUrl = (ctx: AcmeContext, authzId: string) => `${ctx.base}/authz/${authzId}`;
export const challengeUrl = (ctx: AcmeContext, challengeId: string) => `${ctx.base}/challenges/${challengeId}`;

/** Pending and ready objects past their expiry read as invalid (RFC 8555 §7.1.6). */
export const effectiveStatus = (row: { status: string; expires_at: Date | string }, now = new Date()) =>
  (row.status === "pending" || row.status === "ready") && new Date(row.expires_at) <= now ? "invalid" : row.status;

export const challengeDto = (ctx: AcmeContext, c: AcmeChallengeRow) => ({
  type: c.type,
  url: challengeUrl(ctx, c.id),
  status: c.status,
  token: c.token,
  ...(c.validated_at ? { validated: toIso(c.validated_at) } : {}),
  ...(c.error ? { error: c.error } : {}),
});

export const authzDto = (ctx: AcmeContext, a: AcmeAuthzRow, challenges: AcmeChallengeRow[]) => ({
  status: effectiveStatus(a),
  expires: toIso(a.expires_at),
  identifier: { type: a.identifier_type, value: a.identifier_value },
  challenges: challenges.filter((c) => c.authorization_id === a.id).map((c) => challengeDto(ctx, c)),
  ...(a.wildcard ? { wildcard: true } : {}),
});

export const orderDto = (ctx: AcmeContext, o: AcmeOrderRow, authzIds: string[]) => ({
  status: effectiveStatus(o),
  expires: toIso(o.expires_at),
  identifiers: o.identifiers,
  authorizations: authzIds.map((id) => authzUrl(ctx, id)),
  finalize: `${orderUrl(ctx, o.id)}/finalize`,
  ...(o.certificate_id ? { certificate: `${orderUrl(ctx, o.id)}/certificate` } : {}),
  ...(o.error ? { error: o.error } : {}),
});
