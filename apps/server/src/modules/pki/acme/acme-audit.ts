import type { Tx } from "../../../db/transaction";
import {
  acmeAccountActor,
  acmeProfileActor,
  recordProtocolChange,
  recordProtocolRead,
  type ProtocolEvent,
} from "../../audit/audit-protocol";
import type { AcmeContext } from "./acme-jws";

/**
 * Who an ACME request acts as: the account whose key signed it (kid), or, when no account signed
 * (a new account, a revocation signed by the certificate's own key), the profile's client.
 */
const eventOf = (
  ctx: AcmeContext,
  accountId: string | null,
  type: string,
  metadata: Record<string, unknown>,
): ProtocolEvent => ({
  orgId: ctx.orgId,
  projectId: ctx.profile.project_id,
  actor: accountId ? acmeAccountActor(ctx.profile.id, accountId) : acmeProfileActor(ctx.profile.id),
  type,
  metadata: { profileId: ctx.profile.id, ...(accountId ? { accountId } : {}), ...metadata },
  origin: ctx.origin,
});

/** An ACME change's event, written in the change's transaction. */
export const recordAcmeChange = (
  trx: Tx,
  ctx: AcmeContext,
  accountId: string | null,
  type: string,
  metadata: Record<string, unknown>,
) => recordProtocolChange(trx, ctx.deps, eventOf(ctx, accountId, type, metadata));

/** An ACME read that is recorded (the issued certificate leaving the server), buffered. */
export const recordAcmeRead = (ctx: AcmeContext, accountId: string, type: string, metadata: Record<string, unknown>) =>
  recordProtocolRead(ctx.deps, eventOf(ctx, accountId, type, metadata));
