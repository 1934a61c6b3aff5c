import { randomBytes } from "node:crypto";
import { noteAudit, type RequestContext } from "../../../context";
import { hashToken } from "../../../crypto/tokens";
import { inTransaction } from "../../../db/transaction";
import { BadRequestError } from "../../../errors";
import { assertCan } from "../../authz/guard";
import { findConfigSecret } from "../profile.repository";
import { loadProfile } from "../profile.service";
import {
  countPendingChallenges,
  deleteExpiredChallenges,
  insertChallenge,
  lockProfileForChallenges,
} from "./scep.repository";

/**
 * A one-time challenge password for a SCEP profile with dynamic challenges. Whoever may issue
 * certificates from the profile may hand one to a device. Stored as its hash only; shown once;
 * spent by the one enrolment that uses it, or gone after the profile's expiry.
 */
export const issueScepChallenge = async (ctx: RequestContext, profileId: string) => {
  const { profile, ability } = await loadProfile(ctx, profileId);
  assertCan(ability, "issue-cert", "certificate-profiles", { slug: profile.slug });
  const config =
    profile.enrollment_type === "scep" ? await findConfigSecret(ctx.deps.db, profile.id, "scep") : undefined;
  if (!config || config.settings.challengeType !== "dynamic") {
    throw new BadRequestError(`Profile ${profile.slug} does not use dynamic SCEP challenges`);
  }
  const expiryMinutes = Number(config.settings.dynamicChallengeExpiryMinutes ?? 60);
  const maxPending = Number(config.settings.dynamicChallengeMaxPending ?? 100);
  const challenge = randomBytes(24).toString("base64url");
  const now = new Date(ctx.deps.clock.now());
  const expiresAt = new Date(now.getTime() + expiryMinutes * 60_000);
  await inTransaction(ctx, async (trx) => {
    await lockProfileForChallenges(trx, profile.id);
    await deleteExpiredChallenges(trx, profile.id, now);
    if ((await countPendingChallenges(trx, profile.id, now)) >= maxPending) {
      throw new BadRequestError(
        `Profile ${profile.slug} already has ${maxPending} pending SCEP challenges (dynamicChallengeMaxPending)`,
      );
    }
    await insertChallenge(trx, profile.id, hashToken(challenge), expiresAt);
    noteAudit(ctx, { metadata: { profileId: profile.id, expiresAt: expiresAt.toISOString() } });
  });
  return { challenge, expiresAt: expiresAt.toISOString() };
};
