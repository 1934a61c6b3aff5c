import {
  classifyAltName,
  parseDuration,
  splitAltNames,
  type CertKeyAlgorithm,
  type ExtendedKeyUsage,
  type IssueCertificateBody,
  type KeyUsage,
  type ProfileDefaults,
  type SignatureAlgorithm,
} from "@keyward/contract";
import { BadRequestError } from "../../errors";
import { assertCan } from "../authz/guard";
import { insertCertificate } from "./certificate.repository";
import type { CaSigningRow } from "./ca.repository";
import {
  defaultsOf,
  loadIssuingCa,
  notAfterFor,
  prepareCertificate,
  storesPrivateKey,
  withoutRoots,
  type AltName,
  type PreparedCertificate,
} from "./issuance";
import { listConfigsOfProfiles } from "./profile.repository";
import { loadProfile } from "./profile.service";
import { keyAlgorithmOfPublicKey, nameAttribute, parseCsr, type x509 } from "./x509";
import { noteAudit, type RequestContext } from "../../context";
import { inTransaction } from "../../db/transaction";

/** What a request asks for, from either form of the body: top-level fields or `attributes`. */
type IssueRequest = {
  commonName?: string;
  altNames: AltName[];
  ttlMs?: number;
  keyAlgorithm?: CertKeyAlgorithm;
  signatureAlgorithm?: SignatureAlgorithm;
  keyUsages?: KeyUsage[];
  extendedKeyUsages?: ExtendedKeyUsage[];
  notBefore?: Date;
  notAfter?: Date;
  removeRootsFromChain: boolean;
};

/** The contract refuses a body that mixes the two forms, so at most one of them is set here. */
const requestOf = (body: IssueCertificateBody): IssueRequest => {
  const a = body.attributes;
  if (!a)
    return {
      commonName: body.commonName,
      altNames: splitAltNames(body.altNames).map((value) => ({ type: classifyAltName(value)!, value })),
      ttlMs: body.ttl ? parseDuration(body.ttl)! : undefined,
      keyAlgorithm: body.keyAlgorithm,
      removeRootsFromChain: false,
    };
  return {
    commonName: a.commonName,
    altNames: a.altNames ?? [],
    ttlMs: a.ttl ? parseDuration(a.ttl)! : undefined,
    keyAlgorithm: a.keyAlgorithm,
    signatureAlgorithm: a.signatureAlgorithm,
    // An empty list means none was asked for (the agent omits empty keys; others may send []).
    keyUsages: a.keyUsages?.length ? dedupe(a.keyUsages) : undefined,
    extendedKeyUsages: a.extendedKeyUsages?.length ? dedupe(a.extendedKeyUsages) : undefined,
    notBefore: a.notBefore ? new Date(a.notBefore) : undefined,
    notAfter: a.notAfter ? new Date(a.notAfter) : undefined,
    removeRootsFromChain: a.removeRootsFromChain ?? false,
  };
};

const dedupe = <T>(values: T[]) => [...new Set(values)];

const altNamesOf = (requested: AltName[], defaults: ProfileDefaults) => {
  const seen = new Set<string>();
  return [...requested, ...(defaults.subjectAltNames ?? [])].filter((n) => {
    const key = `${n.type}:${n.value.toLowerCase()}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
};

/** How far in the past a requested start may lie: clock skew between client and server, not backdating. */
const NOT_BEFORE_SKEW_MS = 5 * 60 * 1000;

/**
 * Usages a request asks for must stay within the profile: a subset of the usages it names, and never
 * the CA-only ones unless the profile issues CA certificates.
 */
const checkUsages = (request: IssueRequest, defaults: ProfileDefaults) => {
  const allowedKey = defaults.keyUsages;
  for (const usage of request.keyUsages ?? []) {
    const caOnly = usage === "key_cert_sign" || usage === "crl_sign";
    if ((allowedKey && !allowedKey.includes(usage)) || (caOnly && !defaults.basicConstraints?.isCA))
      throw new BadRequestError(`Key usage ${usage} is not allowed by the certificate profile`);
  }
  const allowedExtended = defaults.extendedKeyUsages;
  for (const usage of request.extendedKeyUsages ?? []) {
    if (allowedExtended && !allowedExtended.includes(usage))
      throw new BadRequestError(`Extended key usage ${usage} is not allowed by the certificate profile`);
  }
};

/** The validity window: from the requested start (or now), for the requested TTL or up to the requested end. */
const validityOf = (request: IssueRequest, defaults: ProfileDefaults, ca: CaSigningRow | undefined, now: Date) => {
  const notBefore = request.notBefore ?? now;
  if (notBefore.getTime() < now.getTime() - NOT_BEFORE_SKEW_MS)
    throw new BadRequestError("notBefore cannot be in the past");
  const ttlMs = request.notAfter ? request.notAfter.getTime() - notBefore.getTime() : request.ttlMs;
  if (ttlMs !== undefined && ttlMs < 1000)
    throw new BadRequestError("The certificate must be valid for at least one second");
  return { notBefore, notAfter: notAfterFor(ttlMs, defaults, ca, notBefore) };
};

export const UNSUPPORTED_KEY =
  "The CSR's key algorithm is not supported; use RSA 2048/3072/4096 or EC P-256/P-384/P-521";

/** The answer to an issue or renew call. */
export const issuedDto = (prepared: PreparedCertificate) => ({
  certificateId: prepared.id,
  certificate: prepared.certificate,
  issuingCaCertificate: prepared.issuingCaCertificate,
  certificateChain: prepared.certificateChain,
  ...(prepared.privateKey ? { privateKey: prepared.privateKey } : {}),
  serialNumber: prepared.serialNumber,
});

export const issueCertificate = async (ctx: RequestContext, body: IssueCertificateBody) => {
  const request = requestOf(body);
  const { profile, ability } = await loadProfile(ctx, body.profileId);
  assertCan(ability, "issue-cert", "certificate-profiles", { slug: profile.slug });
  if (profile.enrollment_type !== "api") {
    throw new BadRequestError(
      `Profile ${profile.slug} uses ${profile.enrollment_type} enrollment; only API enrollment issues here`,
    );
  }
  const defaults = defaultsOf(profile);
  const now = new Date();
  const ca = await loadIssuingCa(ctx.deps.db, profile, now);

  let csr: x509.Pkcs10CertificateRequest | undefined;
  if (body.csr) {
    if (!ca)
      throw new BadRequestError(
        "A self-signed certificate cannot be issued for a CSR: it is signed with the subject's own key",
      );
    csr = await parseCsr(body.csr);
    if (!csr) throw new BadRequestError("The CSR is not a valid PKCS#10 request or its signature does not verify");
  }
  const keyAlgorithm: CertKeyAlgorithm | undefined = csr
    ? keyAlgorithmOfPublicKey(csr.publicKey)
    : (request.keyAlgorithm ?? defaults.keyAlgorithm ?? "RSA_2048");
  if (!keyAlgorithm) throw new BadRequestError(UNSUPPORTED_KEY);

  const commonName =
    request.commonName ?? (csr ? nameAttribute(csr.subjectName, "CN") : undefined) ?? defaults.commonName;
  if (!commonName)
    throw new BadRequestError(
      "A common name is required: give commonName, or set it in the CSR or the profile defaults",
    );
  checkUsages(request, defaults);
  const { notBefore, notAfter } = validityOf(request, defaults, ca, now);
  const apiConfig = (await listConfigsOfProfiles(ctx.deps.db, [profile.id])).find((c) => c.type === "api");
  const prepared = await prepareCertificate(ctx.deps, {
    profile,
    ca,
    commonName,
    altNames: altNamesOf(request.altNames, defaults),
    keyAlgorithm,
    signatureAlgorithm: request.signatureAlgorithm,
    keyUsages: request.keyUsages,
    extendedKeyUsages: request.extendedKeyUsages,
    publicKey: csr?.publicKey,
    notBefore,
    notAfter,
    friendlyName: body.friendlyName ?? commonName,
    storeKey: storesPrivateKey(apiConfig?.settings),
  });
  noteAudit(ctx, { metadata: { certificateId: prepared.id } });
  await inTransaction(ctx, (trx) => insertCertificate(trx, prepared.values));
  const issued = issuedDto(prepared);
  if (!body.attributes) return issued;
  // The Infisical form: the certificate inside an envelope, with the id of its (already fulfilled) request.
  const certificate = request.removeRootsFromChain
    ? { ...issued, certificateChain: withoutRoots(issued.certificateChain) }
    : issued;
  return {
    certificate,
    certificateRequestId: issued.certificateId,
    certificateId: issued.certificateId,
    serialNumber: issued.serialNumber,
  };
};
