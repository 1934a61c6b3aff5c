import type { AppDeps } from "../../context";
import { inTransaction } from "../../db/transaction";
import { AppError } from "../../errors";
import { renewFromSource } from "./certificate-renew.service";
import { findProfileOwner, findRenewalSource } from "./certificate.repository";
import { asPlatformChange } from "../audit/audit-scope";
import { claimDueRenewals, recordRenewalFailure } from "./certificate-auto-renew.repository";

const BATCH = 20;
/** How long a claim keeps other instances away from a certificate being renewed. */
const LEASE_MS = 10 * 60_000;
const MAX_BACKOFF_MS = 6 * 3600_000;

/**
 * One pass of automatic renewal. A certificate whose key Keyward keeps gets a new key pair; one
 * whose key only its holder has is re-signed over the same public key, so the holder's key keeps
 * working with the new certificate (fetched with GET /certificates/{id}/bundle of the new id).
 */
export const runAutoRenewPass = async (deps: AppDeps, now = new Date()) => {
  const claimed = await inTransaction(deps.db, (trx) => claimDueRenewals(trx, now, BATCH, LEASE_MS));
  let renewed = 0;
  for (const { id, store_key } of claimed) {
    const source = await findRenewalSource(deps.db, id);
    if (!source) continue;
    try {
      const owner = await findProfileOwner(deps.db, source.profile_id);
      await asPlatformChange(
        deps,
        {
          orgId: owner?.orgId ?? null,
          projectId: owner?.projectId ?? null,
          type: "automated-renew-certificate",
          metadata: { certificateId: id, profileId: source.profile_id, commonName: source.common_name },
        },
        (change) => renewFromSource(change, source, { kind: store_key ? "generate" : "same" }),
      );
      renewed += 1;
    } catch (error) {
      const message = error instanceof AppError ? error.message : "Unexpected error while renewing";
      if (!(error instanceof AppError))
        deps.logger.error({ err: error, certificateId: id }, "certificate renewal failed");
      const backoff = Math.min(MAX_BACKOFF_MS, 60_000 * 2 ** Math.min(source.renewal_attempts, 12));
      await recordRenewalFailure(deps.db, id, message, new Date(now.getTime() + backoff));
    }
  }
  return { claimed: claimed.length, renewed };
};
