import type { Request } from "express";
import type { AppDeps } from "../../context";
import type { Tx } from "../../db/transaction";
import { clientIpOf } from "../../http/authenticate";
import { bufferAuditEvent } from "./audit-buffer";
import { writeAuditEvents, type AuditEventInput } from "./audit-writer";

/**
 * Callers of the certificate enrollment protocols (ACME, EST): not identities, so their events name
 * the profile or ACME account; the actor id is what the `actor` filter matches. A person signing in
 * through their provider's redirect is recorded the same way (`user`: `login-user-oidc`, and
 * `login-user-oidc-failed` when the provider's answer is refused).
 *
 * Their events:
 * - acmeProfile: `create-acme-account`, `revoke-acme-certificate` (signed by the certificate's key);
 * - acmeAccount: `update-acme-account`, `deactivate-acme-account`, `change-acme-account-key`,
 *   `create-acme-order`, `respond-to-acme-challenge`, `pass-acme-challenge`, `fail-acme-challenge`,
 *   `finalize-acme-order`, `revoke-acme-certificate`, and the buffered read `download-acme-certificate`;
 * - estAccount: `est-enrollment` (simpleenroll), `est-renewal` (simplereenroll);
 * - scepAccount: `scep-enrollment` (PKCSReq), `scep-renewal` (RenewalReq);
 * - scimClient (an identity provider holding a SCIM token): `scim-provision-user`, `scim-update-user`,
 *   `scim-deactivate-user`, `scim-deprovision-user`, `scim-create-group`, `scim-update-group`,
 *   `scim-delete-group`.
 */
export type ProtocolActor =
  | { type: "acmeProfile"; id: string; metadata: { profileId: string } }
  | { type: "acmeAccount"; id: string; metadata: { profileId: string; accountId: string } }
  | { type: "estAccount"; id: string; metadata: { profileId: string } }
  | { type: "scepAccount"; id: string; metadata: { profileId: string } }
  | { type: "user"; id: string; metadata: { userId: string; email: string; authMethod?: string } }
  | { type: "scimClient"; id: string; metadata: { scimTokenId: string } };

export const acmeProfileActor = (profileId: string): ProtocolActor => ({
  type: "acmeProfile",
  id: profileId,
  metadata: { profileId },
});

export const acmeAccountActor = (profileId: string, accountId: string): ProtocolActor => ({
  type: "acmeAccount",
  id: accountId,
  metadata: { profileId, accountId },
});

export const estAccountActor = (profileId: string): ProtocolActor => ({
  type: "estAccount",
  id: profileId,
  metadata: { profileId },
});

export const scepAccountActor = (profileId: string): ProtocolActor => ({
  type: "scepAccount",
  id: profileId,
  metadata: { profileId },
});

export const scimClientActor = (scimTokenId: string): ProtocolActor => ({
  type: "scimClient",
  id: scimTokenId,
  metadata: { scimTokenId },
});

/** Where a protocol request came from, taken as the contract routes' events take it. */
export type AuditOrigin = { ipAddress: string; userAgent: string | null };

export const auditOriginOf = (req: Request): AuditOrigin => ({
  ipAddress: clientIpOf(req),
  userAgent: req.headers["user-agent"]?.slice(0, 512) ?? null,
});

/** An event of a protocol request; metadata holds ids, names, thumbprints and serials, never key material. */
export type ProtocolEvent = {
  orgId: string;
  projectId: string | null;
  actor: ProtocolActor;
  type: string;
  metadata: Record<string, unknown>;
  origin: AuditOrigin;
};

const inputOf = (deps: AppDeps, event: ProtocolEvent): AuditEventInput => ({
  orgId: event.orgId,
  projectId: event.projectId,
  actor: event.actor,
  type: event.type,
  metadata: event.metadata,
  ipAddress: event.origin.ipAddress,
  userAgent: event.origin.userAgent,
  createdAt: new Date(deps.clock.now()),
});

/** A protocol client's change: its event is written inside the change's own transaction. */
export const recordProtocolChange = (trx: Tx, deps: AppDeps, event: ProtocolEvent) =>
  writeAuditEvents(trx, deps.env.AUDIT_LOG_RETENTION_DAYS, [inputOf(deps, event)]);

/** A protocol client's recorded read: buffered and written off the request path, like the contract's reads. */
export const recordProtocolRead = (deps: AppDeps, event: ProtocolEvent) => bufferAuditEvent(deps, inputOf(deps, event));
