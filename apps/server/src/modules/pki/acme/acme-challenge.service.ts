import { inTransaction } from "../../../db/transaction";
import { createHash } from "node:crypto";
import { Resolver } from "node:dns/promises";
import type { AppDeps } from "../../../context";
import { getTextPinned, resolveOutboundTarget } from "../../../lib/outbound";
import type { AcmeReply } from "./acme-account.service";
import { accountOf, thumbprintOf, verifyAcmeJws, type AcmeContext } from "./acme-jws";
import { AcmeProblem, notFound } from "./acme-problem";
import {
  findChallenge,
  listAuthorizationsOfOrder,
  listChallengesOf,
  lockOrder,
  moveChallenge,
  reclaimStaleChallenge,
  setAuthorizationStatus,
  setOrderStatus,
} from "./acme.repository";
import { authzUrl, challengeDto } from "./acme.dto";
import { recordAcmeChange } from "./acme-audit";

/** A validation takes at most ~20 s (fetch or DNS timeouts); one older than this was abandoned. */
const STALE_PROCESSING_MS = 60_000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

type Outcome = { ok: true } | { ok: false; problem: AcmeProblem };

/** http-01: the token's key authorization served over plain HTTP by the named host (RFC 8555 §8.3). */
const validateHttp01 = async (deps: AppDeps, domain: string, token: string, keyAuthorization: string) => {
  const url = `http://${domain}:${deps.env.ACME_HTTP01_PORT}/.well-known/acme-challenge/${token}`;
  try {
    const target = await resolveOutboundTarget(url, { schemes: ["http:"], policy: deps.env.ALLOW_PRIVATE_OUTBOUND });
    const body = await getTextPinned(target, { timeoutMs: 10_000, maxBytes: 4096 });
    if (body.trim() === keyAuthorization) return { ok: true } as const;
    return {
      ok: false,
      problem: new AcmeProblem("incorrectResponse", `${url} did not answer the key authorization`, 403),
    } as const;
  } catch (error) {
    const detail = error instanceof Error ? error.message : "unknown error";
    return { ok: false, problem: new AcmeProblem("connection", `Fetching ${url} failed: ${detail}`, 400) } as const;
  }
};

/** dns-01: a TXT record at _acme-challenge.<domain> holding the key authorization's digest (§8.4). */
const validateDns01 = async (deps: AppDeps, domain: string, keyAuthorization: string) => {
  const expected = createHash("sha256").update(keyAuthorization).digest("base64url");
  const resolver = new Resolver({ timeout: 5_000, tries: 2 });
  if (deps.env.ACME_DNS_RESOLVER.length > 0) resolver.setServers(deps.env.ACME_DNS_RESOLVER);
  const name = `_acme-challenge.${domain}`;
  try {
    const records = await resolver.resolveTxt(name);
    if (records.some((chunks) => chunks.join("") === expected)) return { ok: true } as const;
    return {
      ok: false,
      problem: new AcmeProblem("incorrectResponse", `No TXT record at ${name} matches`, 403),
    } as const;
  } catch (error) {
    const detail = error instanceof Error ? error.message : "unknown error";
    return { ok: false, problem: new AcmeProblem("dns", `Looking up TXT ${name} failed: ${detail}`, 400) } as const;
  }
};

type ChallengeRef = {
  id: string;
  type: string;
  authorization_id: string;
  order_id: string;
  account_id: string;
  identifier_value: string;
};

/** What a challenge's events name: ids, the challenge type and the domain (never the token). */
const challengeMetadata = (challenge: ChallengeRef) => ({
  orderId: challenge.order_id,
  authorizationId: challenge.authorization_id,
  challengeId: challenge.id,
  challengeType: challenge.type,
  identifier: challenge.identifier_value,
});

/**
 * Record a validation outcome: the challenge, its authorization, and the order (ready once every
 * authorization is valid, invalid as soon as one fails), in one transaction under the order's lock.
 */
const recordOutcome = async (ctx: AcmeContext, challenge: ChallengeRef, outcome: Outcome) =>
  inTransaction(ctx, async (trx) => {
    const order = await lockOrder(trx, challenge.order_id, ["pending"]);
    const moved = await moveChallenge(
      trx,
      challenge.id,
      "processing",
      outcome.ok ? "valid" : "invalid",
      outcome.ok ? { validated_at: new Date() } : { error: JSON.stringify(outcome.problem.toJSON()) },
    );
    if (!moved) return;
    // Decided here, in the request of the account that asked for the validation: that account is the actor.
    await recordAcmeChange(trx, ctx, challenge.account_id, outcome.ok ? "pass-acme-challenge" : "fail-acme-challenge", {
      ...challengeMetadata(challenge),
      ...(outcome.ok ? {} : { errorType: outcome.problem.toJSON().type }),
    });
    if (!order) return;
    await setAuthorizationStatus(trx, challenge.authorization_id, outcome.ok ? "valid" : "invalid");
    const authzs = await listAuthorizationsOfOrder(trx, order.id);
    if (!outcome.ok) {
      await setOrderStatus(trx, order.id, { status: "invalid", error: JSON.stringify(outcome.problem.toJSON()) });
    } else if (authzs.every((a) => a.status === "valid")) {
      await setOrderStatus(trx, order.id, { status: "ready" });
    }
  });

/**
 * POST to a challenge: an empty object asks the server to validate it (RFC 8555 §7.5.1); an empty
 * payload only reads it. Validation runs in this request, outside any transaction, through the
 * outbound guard; the answer shows the challenge as it ended.
 */
export const postChallenge = async (ctx: AcmeContext, challengeId: string, body: unknown): Promise<AcmeReply> => {
  const verified = await verifyAcmeJws(ctx, body, "kid");
  const account = accountOf(verified);
  const found = UUID.test(challengeId) ? await findChallenge(ctx.deps.db, challengeId) : undefined;
  if (!found || found.account_id !== account.id) throw notFound("Challenge");
  const respond = verified.payload !== undefined;
  if (respond && found.authz_status === "pending") {
    const owned = await inTransaction(ctx, async (trx) => {
      const taken =
        found.status === "pending"
          ? await moveChallenge(trx, found.id, "pending", "processing")
          : found.status === "processing" &&
            (await reclaimStaleChallenge(trx, found.id, new Date(Date.now() - STALE_PROCESSING_MS)));
      if (taken) await recordAcmeChange(trx, ctx, account.id, "respond-to-acme-challenge", challengeMetadata(found));
      return taken;
    });
    if (owned) {
      const keyAuthorization = `${found.token}.${await thumbprintOf(account.jwk)}`;
      const outcome =
        found.type === "http-01"
          ? await validateHttp01(ctx.deps, found.identifier_value, found.token, keyAuthorization)
          : await validateDns01(ctx.deps, found.identifier_value, keyAuthorization);
      await recordOutcome(ctx, found, outcome);
    }
  }
  const current = (await listChallengesOf(ctx.deps.db, [found.authorization_id])).find((c) => c.id === found.id)!;
  return {
    status: 200,
    body: challengeDto(ctx, current),
    links: [`<${authzUrl(ctx, found.authorization_id)}>;rel="up"`],
  };
};
