import {
  classifyAltName,
  parseDuration,
  splitAltNames,
  type CertKeyAlgorithm,
  type IssueCertificateBody,
  type ProfileDefaults,
} from "@keyward/contract";
import type { RequestContext } from "../../context";
import { BadRequestError } from "../../errors";
import { assertCan } from "../authz/guard";
import { insertCertificate } from "./certificate.repository";
import {
  defaultsOf,
  loadIssuingCa,
  notAfterFor,
  prepareCertificate,
  storesPrivateKey,
  type PreparedCertificate,
} from "./issuance";
import { listConfigsOfProfiles } from "./profile.repository";
import { loadProfile } from "./profile.service";
import { keyAlgorithmOfPublicKey, nameAttribute, parseCsr, type x509 } from "./x509";
import { noteAudit } from "../audit/audit-scope";
import { inTransaction } from "../../db/transaction";

const altNamesOf = (body: IssueCertificateBody, defaults: ProfileDefaults) => {
  const requested = splitAltNames(body.altNames).map((value) => ({ type: classifyAltName(value)!, value }));
  const seen = new Set<string>();
  return [...requested, ...(defaults.subjectAltNames ?? [])].filter((n) => {
    const key = `${n.type}:${n.value.toLowerCase()}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
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
    : (body.keyAlgorithm ?? defaults.keyAlgorithm ?? "RSA_2048");
  if (!keyAlgorithm) throw new BadRequestError(UNSUPPORTED_KEY);

  const commonName = body.commonName ?? (csr ? nameAttribute(csr.subjectName, "CN") : undefined) ?? defaults.commonName;
  if (!commonName)
    throw new BadRequestError(
      "A common name is required: give commonName, or set it in the CSR or the profile defaults",
    );
  const notAfter = notAfterFor(body.ttl ? parseDuration(body.ttl)! : undefined, defaults, ca, now);
  const apiConfig = (await listConfigsOfProfiles(ctx.deps.db, [profile.id])).find((c) => c.type === "api");
  const prepared = await prepareCertificate(ctx.deps, {
    profile,
    ca,
    commonName,
    altNames: altNamesOf(body, defaults),
    keyAlgorithm,
    publicKey: csr?.publicKey,
    notBefore: now,
    notAfter,
    friendlyName: body.friendlyName ?? commonName,
    storeKey: storesPrivateKey(apiConfig?.settings),
  });
  noteAudit(ctx, { metadata: { certificateId: prepared.id } });
  await inTransaction(ctx, (trx) => insertCertificate(trx, prepared.values));
  return issuedDto(prepared);
};
