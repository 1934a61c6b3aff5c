import { timingSafeEqual } from "node:crypto";
import { flattenedVerify, type JWK } from "jose";
import { isUniqueViolation } from "../../../db/errors";
import { inTransaction } from "../../../db/transaction";
import { findConfigSecret } from "../profile.repository";
import {
  accountOf,
  accountUrl,
  asFlattenedJws,
  decodeHeader,
  decodeJsonPayload,
  thumbprintOf,
  verifyAcmeJws,
  verifyWithJwk,
  ACCOUNT_KEY_ALGORITHMS,
  type AcmeContext,
} from "./acme-jws";
import {
  AcmeProblem,
  accountDoesNotExist,
  badSignatureAlgorithm,
  externalAccountRequired,
  malformed,
  unauthorized,
} from "./acme-problem";
import { recordAcmeChange } from "./acme-audit";
import { findAccountByThumbprint, insertAccount, updateAccount, type AcmeAccountRow } from "./acme.repository";

export type AcmeReply = { status: number; body: unknown; location?: string; links?: string[]; contentType?: string };

export const accountDto = (ctx: AcmeContext, account: AcmeAccountRow) => ({
  status: account.status,
  contact: account.contact,
  orders: `${accountUrl(ctx, account.id)}/orders`,
});

const contactsOf = (payload: Record<string, unknown>) => {
  const contact = payload.contact ?? [];
  if (!Array.isArray(contact) || contact.length > 10) throw malformed("contact must be a list of at most 10 URLs");
  for (const c of contact) {
    if (typeof c !== "string" || c.length > 256) throw new AcmeProblem("invalidContact", "A contact is not a string");
    if (!/^mailto:[^@\s,]+@[^@\s,]+$/.test(c)) {
      throw new AcmeProblem("unsupportedContact", "Only mailto: contacts with one address are supported");
    }
  }
  return contact as string[];
};

const HMAC_ALGORITHMS = ["HS256", "HS384", "HS512"];

/** RFC 8555 §7.3.4: the EAB JWS is an HMAC (profile id as kid) over the account key, for this URL. */
const verifyEab = async (ctx: AcmeContext, eab: unknown, accountJwk: JWK) => {
  const jws = asFlattenedJws(eab);
  const header = decodeHeader(jws, "The externalAccountBinding header");
  if (typeof header.alg !== "string" || !HMAC_ALGORITHMS.includes(header.alg))
    throw badSignatureAlgorithm(HMAC_ALGORITHMS);
  if (header.kid !== ctx.profile.id) throw unauthorized("The external account binding key id is unknown");
  if (header.url !== ctx.url) throw unauthorized("The external account binding url does not match");
  if (header.nonce !== undefined) throw malformed("The external account binding must not carry a nonce");
  const config = await findConfigSecret(ctx.deps.db, ctx.profile.id, "acme");
  if (!config?.encrypted_secret) throw unauthorized("External account binding is not set up for this profile");
  const secret = ctx.deps.secretBox.decrypt(config.encrypted_secret, `pki-enrollment:${config.id}`);
  let payload: Uint8Array;
  try {
    payload = (await flattenedVerify(jws, Buffer.from(secret, "base64url"), { algorithms: [header.alg] })).payload;
  } catch {
    throw unauthorized("The external account binding signature does not verify");
  }
  const bound = decodeJsonPayload(payload, "The external account binding payload") as JWK;
  const [a, b] = await Promise.all([thumbprintOf(bound), thumbprintOf(accountJwk)]).catch(() => {
    throw malformed("The external account binding payload is not a JWK");
  });
  if (!timingSafeEqual(Buffer.from(a), Buffer.from(b))) {
    throw unauthorized("The external account binding is for another key");
  }
};

export const newAccount = async (ctx: AcmeContext, body: unknown): Promise<AcmeReply> => {
  const verified = await verifyAcmeJws(ctx, body, "jwk");
  const payload = (verified.payload ?? {}) as Record<string, unknown>;
  if (typeof payload !== "object") throw malformed("The payload must be an object");
  const thumbprint = await thumbprintOf(verified.jwk);
  const existing = await findAccountByThumbprint(ctx.deps.db, ctx.profile.id, thumbprint);
  if (existing) {
    return { status: 200, body: accountDto(ctx, existing), location: accountUrl(ctx, existing.id) };
  }
  if (payload.onlyReturnExisting === true) throw accountDoesNotExist();
  const contact = contactsOf(payload);
  if (payload.externalAccountBinding !== undefined) {
    await verifyEab(ctx, payload.externalAccountBinding, verified.jwk);
  } else if (!ctx.settings.skipEabBinding) {
    throw externalAccountRequired();
  }
  try {
    const bound = payload.externalAccountBinding !== undefined;
    const account = await inTransaction(ctx, async (trx) => {
      const created = await insertAccount(trx, {
        profile_id: ctx.profile.id,
        thumbprint,
        jwk: JSON.stringify(verified.jwk),
        contact: JSON.stringify(contact),
        eab_kid: bound ? ctx.profile.id : null,
      });
      // No account signed this request (its key came as jwk): the profile's client is the actor.
      await recordAcmeChange(trx, ctx, null, "create-acme-account", {
        accountId: created.id,
        thumbprint,
        externalAccountBinding: bound,
      });
      return created;
    });
    return { status: 201, body: accountDto(ctx, account), location: accountUrl(ctx, account.id) };
  } catch (error) {
    // The same key registered by a concurrent request: answer with that account.
    if (!isUniqueViolation(error)) throw error;
    const raced = await findAccountByThumbprint(ctx.deps.db, ctx.profile.id, thumbprint);
    if (!raced) throw error;
    return { status: 200, body: accountDto(ctx, raced), location: accountUrl(ctx, raced.id) };
  }
};

/** POST to the account URL: read it (empty payload), update contacts, or deactivate it. */
export const postAccount = async (ctx: AcmeContext, accountId: string, body: unknown): Promise<AcmeReply> => {
  const verified = await verifyAcmeJws(ctx, body, "kid");
  const account = accountOf(verified);
  if (account.id !== accountId) throw unauthorized("The kid does not name this account");
  const payload = verified.payload as Record<string, unknown> | undefined;
  if (!payload || Object.keys(payload).length === 0) return { status: 200, body: accountDto(ctx, account) };
  if (payload.status !== undefined && payload.status !== "deactivated") {
    throw malformed("An account can only be changed to status deactivated");
  }
  const deactivate = payload.status === "deactivated";
  const contact = payload.contact !== undefined ? JSON.stringify(contactsOf(payload)) : undefined;
  const updated = await inTransaction(ctx, async (trx) => {
    const row = await updateAccount(trx, account.id, {
      ...(contact !== undefined ? { contact } : {}),
      ...(deactivate ? { status: "deactivated" as const } : {}),
    });
    await recordAcmeChange(trx, ctx, account.id, deactivate ? "deactivate-acme-account" : "update-acme-account", {
      status: row.status,
      contactChanged: contact !== undefined,
    });
    return row;
  });
  return { status: 200, body: accountDto(ctx, updated) };
};

/** RFC 8555 §7.3.5: the inner JWS, signed by the new key, names the account and its old key. */
export const keyChange = async (ctx: AcmeContext, body: unknown): Promise<AcmeReply> => {
  const verified = await verifyAcmeJws(ctx, body, "kid");
  const account = accountOf(verified);
  const inner = asFlattenedJws(verified.payload);
  const header = decodeHeader(inner, "The inner JWS header");
  if (typeof header.alg !== "string" || !ACCOUNT_KEY_ALGORITHMS.includes(header.alg)) {
    throw badSignatureAlgorithm(ACCOUNT_KEY_ALGORITHMS);
  }
  if (!header.jwk || header.kid !== undefined || header.nonce !== undefined) {
    throw malformed("The inner JWS must carry the new key as jwk, and no kid or nonce");
  }
  if (header.url !== ctx.url) throw malformed("The inner JWS url must be the key-change URL");
  const newJwk = header.jwk as JWK;
  if (newJwk.d !== undefined || newJwk.k !== undefined || newJwk.kty === "oct") {
    throw malformed("The new key must be a public key");
  }
  const innerPayload = await verifyWithJwk(inner, newJwk, header.alg, [header.alg]);
  const change = (decodeJsonPayload(innerPayload.payload, "The inner JWS payload") ?? {}) as {
    account?: unknown;
    oldKey?: JWK;
  };
  if (change.account !== accountUrl(ctx, account.id)) throw malformed("The inner payload names another account");
  const oldThumbprint = change.oldKey ? await thumbprintOf(change.oldKey).catch(() => "") : "";
  if (oldThumbprint !== account.thumbprint) throw malformed("oldKey is not the account's current key");
  const thumbprint = await thumbprintOf(newJwk);
  const taken = await findAccountByThumbprint(ctx.deps.db, ctx.profile.id, thumbprint);
  if (taken) {
    return {
      status: 409,
      body: { type: "urn:ietf:params:acme:error:malformed", detail: "The new key is already in use", status: 409 },
      location: accountUrl(ctx, taken.id),
      contentType: "application/problem+json",
    };
  }
  const updated = await inTransaction(ctx, async (trx) => {
    const row = await updateAccount(trx, account.id, { jwk: JSON.stringify(newJwk), thumbprint });
    await recordAcmeChange(trx, ctx, account.id, "change-acme-account-key", {
      previousThumbprint: account.thumbprint,
      thumbprint,
    });
    return row;
  });
  return { status: 200, body: accountDto(ctx, updated) };
};
