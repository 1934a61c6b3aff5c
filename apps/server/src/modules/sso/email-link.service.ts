import { createHash, randomBytes, randomInt, timingSafeEqual } from "node:crypto";
import type { AppDeps, ChangeContext } from "../../context";
import { hashToken } from "../../crypto/tokens";
import { inTransaction, type Tx } from "../../db/transaction";
import { BadRequestError, ForbiddenError, UnauthorizedError } from "../../errors";
import { recordProtocolChange, type AuditOrigin } from "../audit/audit-protocol";
import { startSession, type SessionTokens } from "../sessions/session.service";
import { linkProvenPerson, type ProviderLogin } from "../users/sign-in.service";
import {
  countWrongCode,
  deleteOldEmailLinks,
  insertEmailLink,
  lockEmailLink,
  spendEmailLink,
} from "./email-link.repository";
import { findOidcConfigOfOrg } from "./oidc-config.repository";

/**
 * Proof that a person controls an address, asked for when an organization's provider vouches for
 * the e-mail of a person another organization knows: a provider's `email_verified` is that
 * organization's word, not the person's. Keyward mails an eight-digit code to the address and links
 * the provider login only when the browser that signed in enters it. The code is stored only as the
 * hash of the browser binding and the code, so the table alone does not give it away; five wrong
 * answers spend the link.
 */

const LINK_TTL_MS = 10 * 60_000;
const MAX_ATTEMPTS = 5;

const codeHash = (binding: string, code: string) => createHash("sha256").update(`${binding}:${code}`).digest();

export type EmailProofRequest = { binding: string; ttlSeconds: number; send: () => Promise<void> };

/**
 * Write the pending link in the caller's transaction; answers the browser binding to set as a cookie
 * and the mail to send once the transaction has committed. Without a mail server the sign-in is
 * refused and says why.
 */
export const requestEmailProof = async (
  deps: AppDeps,
  trx: Tx,
  input: {
    login: ProviderLogin;
    userId: string;
    orgName: string;
    callbackPort: number | null;
    callbackState: string | null;
    origin: AuditOrigin;
  },
): Promise<EmailProofRequest> => {
  const { login } = input;
  const mailer = deps.mailer;
  if (!mailer) {
    throw new ForbiddenError(
      `Single sign-on failed: ${login.email} already has a Keyward account in another organization. ` +
        "Linking it to this organization's sign-in needs a code sent to that address, " +
        "and this instance sends no e-mail (SMTP_URL is not set)",
    );
  }
  const binding = randomBytes(32).toString("base64url");
  const code = String(randomInt(0, 100_000_000)).padStart(8, "0");
  const now = deps.clock.now();
  await deleteOldEmailLinks(trx, new Date(now - 86_400_000));
  const row = await insertEmailLink(trx, {
    org_id: login.orgId,
    user_id: input.userId,
    alias_type: login.aliasType,
    external_id: login.subject,
    email: login.email,
    first_name: login.firstName,
    last_name: login.lastName,
    groups: login.groups ? JSON.stringify(login.groups) : null,
    binding_hash: hashToken(binding),
    code_hash: codeHash(binding, code),
    callback_port: input.callbackPort,
    callback_state: input.callbackState,
    expires_at: new Date(now + LINK_TTL_MS),
  });
  await recordProtocolChange(trx, deps, {
    orgId: login.orgId,
    projectId: null,
    actor: {
      type: "user",
      id: input.userId,
      metadata: { userId: input.userId, email: login.email, authMethod: "oidc" },
    },
    type: "login-user-oidc-email-code-sent",
    metadata: { userId: input.userId, email: login.email, linkId: row.id },
    origin: input.origin,
  });
  const minutes = LINK_TTL_MS / 60_000;
  return {
    binding,
    ttlSeconds: LINK_TTL_MS / 1000,
    send: () =>
      mailer.send({
        to: login.email,
        subject: `Your code to sign in to ${input.orgName} on Keyward`,
        text:
          `Someone signed in to the organization ${input.orgName} on Keyward with this e-mail address, ` +
          `through that organization's single sign-on.\n\nIf it was you, enter this code on the sign-in page ` +
          `to link your account to it:\n\n    ${code}\n\nThe code expires in ${minutes} minutes. ` +
          "If it was not you, ignore this e-mail: nothing changes without the code.\n",
      }),
  };
};

export type ProvenSignIn = SessionTokens & { callbackPort: number | null; callbackState: string | null };

/**
 * The browser's answer: the right code, in time, links the provider login to the person and starts
 * their session in the organization, with its `login-user-oidc` event. A wrong code counts against
 * the link and records `login-user-oidc-failed`.
 */
export const confirmEmailProof = async (
  ctx: ChangeContext,
  input: { binding: string | undefined; code: string },
  origin: { ip: string; userAgent: string },
): Promise<ProvenSignIn> => {
  const { deps } = ctx;
  const binding = input.binding;
  if (!binding || binding.length > 128) throw linkEnded();
  const now = new Date(deps.clock.now());
  const outcome = await inTransaction(ctx, async (trx) => {
    const link = await lockEmailLink(trx, hashToken(binding));
    if (!link || link.used_at || new Date(link.expires_at) <= now) return { kind: "ended" as const };
    ctx.scope?.notePerson({ userId: link.user_id, email: link.email }, link.org_id);
    if (!timingSafeEqual(codeHash(binding, input.code), link.code_hash)) {
      const left = MAX_ATTEMPTS - link.attempts - 1;
      await countWrongCode(trx, link.id, left <= 0, now);
      ctx.scope?.note({
        eventType: "login-user-oidc-failed",
        metadata: {
          userId: link.user_id,
          email: link.email,
          reason: "wrong e-mail code",
          triesLeft: Math.max(left, 0),
        },
      });
      return { kind: "wrong" as const, left };
    }
    await spendEmailLink(trx, link.id, now);
    const config = await findOidcConfigOfOrg(trx, link.org_id);
    if (!config?.is_active) {
      ctx.scope?.note({ eventType: "login-user-oidc-failed", metadata: { reason: "single sign-on turned off" } });
      return { kind: "ended" as const };
    }
    const login: ProviderLogin = {
      orgId: link.org_id,
      aliasType: link.alias_type,
      subject: link.external_id,
      email: link.email,
      firstName: link.first_name,
      lastName: link.last_name,
      now,
      groups: link.groups ?? undefined,
    };
    const person = await linkProvenPerson(trx, login, link.user_id, { linkedByEmailCode: true });
    const tokens = await startSession(deps, trx, {
      userId: person.userId,
      orgId: link.org_id,
      authMethod: "oidc",
      ip: origin.ip,
      userAgent: origin.userAgent,
    });
    ctx.scope?.note({
      metadata: {
        userId: person.userId,
        email: link.email,
        authMethod: "oidc",
        sessionId: tokens.sessionId,
        ...person.note,
      },
    });
    return { kind: "signed-in" as const, tokens, callbackPort: link.callback_port, callbackState: link.callback_state };
  });
  if (outcome.kind === "ended") throw linkEnded();
  if (outcome.kind === "wrong") {
    throw new BadRequestError(
      outcome.left > 0
        ? `The code is not right: ${outcome.left} ${outcome.left === 1 ? "try" : "tries"} left`
        : "The code is not right, and no tries are left: sign in again for a new code",
    );
  }
  return { ...outcome.tokens, callbackPort: outcome.callbackPort, callbackState: outcome.callbackState };
};

const linkEnded = () =>
  new UnauthorizedError("Single sign-on failed: this sign-in is unknown, expired or already used. Sign in again");
