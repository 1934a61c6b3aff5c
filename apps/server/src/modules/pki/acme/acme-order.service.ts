import { inTransaction } from "../../../db/transaction";
import { randomBytes } from "node:crypto";
import { isValidAltName } from "@keyward/contract";
import type { CertKeyAlgorithm } from "@keyward/contract";
import { AppError } from "../../../errors";
import { findCertificatePem, insertCertificate } from "../certificate.repository";
import { defaultsOf, loadIssuingCa, notAfterFor, prepareCertificate } from "../issuance";
import { csrAltNames, csrTextIsWellFormed, keyAlgorithmOfPublicKey, nameAttribute, x509 } from "../x509";
import type { AcmeReply } from "./acme-account.service";
import { accountOf, verifyAcmeJws, type AcmeContext } from "./acme-jws";
import {
  badCsr,
  malformed,
  notFound,
  orderNotReady,
  rejectedIdentifier,
  unauthorized,
  unsupportedIdentifier,
} from "./acme-problem";
import {
  findAuthorization,
  findOrder,
  insertAuthorization,
  insertChallenges,
  insertOrder,
  listAuthorizationsOfOrder,
  listChallengesOf,
  listOrderIdsOfAccount,
  lockOrder,
  setOrderStatus,
  type AcmeAccountRow,
  type AcmeOrderRow,
} from "./acme.repository";
import { recordAcmeChange, recordAcmeRead } from "./acme-audit";
import { authzDto, authzUrl, orderDto, orderUrl } from "./acme.dto";

const ORDER_LIFETIME_MS = 7 * 24 * 3600 * 1000;
const MAX_IDENTIFIERS = 100;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const identifiersOf = (payload: Record<string, unknown>) => {
  const list = payload.identifiers;
  if (!Array.isArray(list) || list.length === 0 || list.length > MAX_IDENTIFIERS) {
    throw malformed(`identifiers must list 1 to ${MAX_IDENTIFIERS} identifiers`);
  }
  const seen = new Set<string>();
  return list.map((raw: unknown) => {
    const id = raw as { type?: unknown; value?: unknown };
    if (id?.type !== "dns") throw unsupportedIdentifier("Only dns identifiers are supported");
    if (typeof id.value !== "string") throw malformed("An identifier value must be a string");
    const value = id.value.toLowerCase();
    if (!isValidAltName("dns_name", value)) throw rejectedIdentifier(`${value.slice(0, 64)} is not a valid DNS name`);
    if (seen.has(value)) throw malformed(`${value} is listed twice`);
    seen.add(value);
    return { type: "dns", value };
  });
};

/** The order of this account; another account's order is as unknown as a missing one. */
const loadOwnOrder = async (ctx: AcmeContext, account: AcmeAccountRow, orderId: string) => {
  const order = UUID.test(orderId) ? await findOrder(ctx.deps.db, orderId) : undefined;
  if (!order || order.account_id !== account.id) throw notFound("Order");
  return order;
};

const orderReply = async (ctx: AcmeContext, order: AcmeOrderRow, status = 200): Promise<AcmeReply> => {
  const authz = await listAuthorizationsOfOrder(ctx.deps.db, order.id);
  return {
    status,
    body: orderDto(
      ctx,
      order,
      authz.map((a) => a.id),
    ),
    location: orderUrl(ctx, order.id),
  };
};

export const newOrder = async (ctx: AcmeContext, body: unknown): Promise<AcmeReply> => {
  const verified = await verifyAcmeJws(ctx, body, "kid");
  const account = accountOf(verified);
  const payload = (verified.payload ?? {}) as Record<string, unknown>;
  if (payload.notBefore !== undefined || payload.notAfter !== undefined) {
    throw malformed("notBefore and notAfter are not supported; the profile sets the lifetime");
  }
  const identifiers = identifiersOf(payload);
  const skip = ctx.settings.skipDnsOwnershipVerification;
  const expiresAt = new Date(Date.now() + ORDER_LIFETIME_MS);
  const order = await inTransaction(ctx, async (trx) => {
    const created = await insertOrder(trx, {
      account_id: account.id,
      status: skip ? "ready" : "pending",
      identifiers: JSON.stringify(identifiers),
      expires_at: expiresAt,
    });
    for (const id of identifiers) {
      const wildcard = id.value.startsWith("*.");
      const authz = await insertAuthorization(trx, {
        order_id: created.id,
        identifier_type: "dns",
        identifier_value: wildcard ? id.value.slice(2) : id.value,
        wildcard,
        status: skip ? "valid" : "pending",
        expires_at: expiresAt,
      });
      // A wildcard can only be proven in DNS; http-01 proves a single host.
      const types = wildcard ? (["dns-01"] as const) : (["http-01", "dns-01"] as const);
      await insertChallenges(
        trx,
        types.map((type) => ({
          authorization_id: authz.id,
          type,
          token: randomBytes(32).toString("base64url"),
          status: skip ? "valid" : "pending",
          ...(skip ? { validated_at: new Date() } : {}),
        })),
      );
    }
    await recordAcmeChange(trx, ctx, account.id, "create-acme-order", {
      orderId: created.id,
      identifiers: identifiers.map((id) => id.value),
      status: created.status,
    });
    return created;
  });
  return orderReply(ctx, order, 201);
};

export const getOrder = async (ctx: AcmeContext, orderId: string, body: unknown): Promise<AcmeReply> => {
  const account = accountOf(await verifyAcmeJws(ctx, body, "kid"));
  return orderReply(ctx, await loadOwnOrder(ctx, account, orderId));
};

export const listOrders = async (ctx: AcmeContext, accountId: string, body: unknown): Promise<AcmeReply> => {
  const account = accountOf(await verifyAcmeJws(ctx, body, "kid"));
  if (account.id !== accountId) throw unauthorized("The kid does not name this account");
  const ids = await listOrderIdsOfAccount(ctx.deps.db, account.id);
  return { status: 200, body: { orders: ids.map((o) => orderUrl(ctx, o.id)) } };
};

export const getAuthz = async (ctx: AcmeContext, authzId: string, body: unknown): Promise<AcmeReply> => {
  const account = accountOf(await verifyAcmeJws(ctx, body, "kid"));
  const authz = UUID.test(authzId) ? await findAuthorization(ctx.deps.db, authzId) : undefined;
  if (!authz || authz.account_id !== account.id) throw notFound("Authorization");
  const challenges = await listChallengesOf(ctx.deps.db, [authz.id]);
  return { status: 200, body: authzDto(ctx, authz, challenges), location: authzUrl(ctx, authz.id) };
};

/** The CSR's names must be exactly the order's identifiers; its key a kind the profile issues for. */
const checkCsr = async (ctx: AcmeContext, order: AcmeOrderRow, encoded: unknown) => {
  if (typeof encoded !== "string" || encoded.length > 65_536) throw malformed("csr must be a base64url string");
  let csr: x509.Pkcs10CertificateRequest;
  try {
    csr = new x509.Pkcs10CertificateRequest(Buffer.from(encoded, "base64url"));
  } catch {
    throw badCsr("The CSR is not a DER PKCS#10 request");
  }
  if (!(await csr.verify().catch(() => false))) throw badCsr("The CSR's signature does not verify");
  if (!csrTextIsWellFormed(csr))
    throw badCsr("The CSR's subject or alternative names are not well-formed Unicode text");
  const keyAlgorithm: CertKeyAlgorithm | undefined = keyAlgorithmOfPublicKey(csr.publicKey);
  if (!keyAlgorithm) throw badCsr("The CSR's key must be RSA 2048/3072/4096 or EC P-256/P-384/P-521");
  const required = defaultsOf(ctx.profile).keyAlgorithm;
  if (required && required !== keyAlgorithm) throw badCsr(`This profile issues only for ${required} keys`);
  const items = csrAltNames(csr);
  if (items.some((n) => n.type !== "dns")) throw badCsr("The CSR may only name DNS identifiers");
  const names = new Set(items.map((n) => n.value.toLowerCase()));
  const commonName = nameAttribute(csr.subjectName, "CN")?.toLowerCase();
  if (commonName) names.add(commonName);
  const wanted = new Set(order.identifiers.map((i) => i.value));
  if (names.size !== wanted.size || [...names].some((n) => !wanted.has(n))) {
    throw badCsr("The CSR's names must be exactly the order's identifiers");
  }
  return { csr, keyAlgorithm, commonName: commonName ?? order.identifiers[0]!.value };
};

export const finalizeOrder = async (ctx: AcmeContext, orderId: string, body: unknown): Promise<AcmeReply> => {
  const verified = await verifyAcmeJws(ctx, body, "kid");
  const account = accountOf(verified);
  const order = await loadOwnOrder(ctx, account, orderId);
  if (order.status !== "ready" || new Date(order.expires_at) <= new Date()) throw orderNotReady(order.status);
  const { csr, keyAlgorithm, commonName } = await checkCsr(
    ctx,
    order,
    (verified.payload as { csr?: unknown } | undefined)?.csr,
  );
  const now = new Date();
  let prepared;
  try {
    const ca = await loadIssuingCa(ctx.deps.db, ctx.profile, now);
    if (!ca) throw badCsr("This profile has no CA to sign with");
    prepared = await prepareCertificate(ctx.deps, {
      profile: ctx.profile,
      ca,
      commonName,
      altNames: order.identifiers.map((i) => ({ type: "dns_name", value: i.value })),
      keyAlgorithm,
      publicKey: csr.publicKey,
      notBefore: now,
      notAfter: notAfterFor(undefined, defaultsOf(ctx.profile), ca, now),
      friendlyName: commonName,
      storeKey: false,
    });
  } catch (error) {
    // The profile or its CA cannot issue (disabled, expired, lifetime past the CA): the client cannot fix that.
    if (error instanceof AppError) throw badCsr(error.message);
    throw error;
  }
  const finalized = await inTransaction(ctx, async (trx) => {
    if (!(await lockOrder(trx, order.id, ["ready"]))) return false;
    await insertCertificate(trx, prepared.values);
    await setOrderStatus(trx, order.id, { status: "valid", certificate_id: prepared.id });
    await recordAcmeChange(trx, ctx, account.id, "finalize-acme-order", {
      orderId: order.id,
      certificateId: prepared.id,
      serialNumber: prepared.serialNumber,
      commonName,
    });
    return true;
  });
  if (!finalized) throw orderNotReady("no longer ready");
  return orderReply(ctx, (await findOrder(ctx.deps.db, order.id))!);
};

/** The issued certificate and the chain above it, as one PEM document. */
export const downloadCertificate = async (ctx: AcmeContext, orderId: string, body: unknown): Promise<AcmeReply> => {
  const account = accountOf(await verifyAcmeJws(ctx, body, "kid"));
  const order = await loadOwnOrder(ctx, account, orderId);
  if (!order.certificate_id) throw notFound("Certificate");
  const pem = await findCertificatePem(ctx.deps.db, order.certificate_id);
  recordAcmeRead(ctx, account.id, "download-acme-certificate", {
    orderId: order.id,
    certificateId: order.certificate_id,
  });
  return {
    status: 200,
    body: `${[pem.certificate_pem, pem.certificate_chain_pem]
      .map((p) => p.trim())
      .filter(Boolean)
      .join("\n")}\n`,
    contentType: "application/pem-certificate-chain",
  };
};
