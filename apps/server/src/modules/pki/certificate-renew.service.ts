import { inTransaction, type Tx } from "../../db/transaction";
import { classifyAltName, splitAltNames, type CertKeyAlgorithm, type RenewCertificateBody } from "@keyward/contract";
import { BadRequestError } from "../../errors";
import { assertCan } from "../authz/guard";
import { UNSUPPORTED_KEY, issuedDto } from "./certificate-issue.service";
import {
  findRenewalSource,
  insertCertificate,
  lockRenewable,
  markRenewed,
  type RenewalSource,
} from "./certificate.repository";
import { loadCertificate, permissionObject } from "./certificate.service";
import {
  loadIssuingCa,
  notAfterFor,
  defaultsOf,
  prepareCertificate,
  storesPrivateKey,
  withoutRoots,
  type PreparedCertificate,
} from "./issuance";
import { findProfileById, listConfigsOfProfiles } from "./profile.repository";
import { keyAlgorithmOfPublicKey, parseCsr, x509 } from "./x509";
import { noteAudit, type ChangeContext, type RequestContext } from "../../context";

const DAY_MS = 24 * 3600 * 1000;

export const alreadyRenewed = () => new BadRequestError("The certificate has already been renewed");

export type RenewKey =
  | { kind: "generate" }
  | { kind: "same" }
  | { kind: "csr"; csr: x509.Pkcs10CertificateRequest; keyAlgorithm: CertKeyAlgorithm };

/**
 * Issue `source` again through its profile: same subject and names, the same lifetime (within the
 * profile's limit), a new key (or the CSR's, or the same one), linked both ways to the old one.
 * The new row and the link are written in one transaction under a lock on the old row, so two
 * renewals of one certificate never both succeed.
 */
export const renewFromSource = async (
  ctx: ChangeContext,
  source: RenewalSource,
  key: RenewKey,
  now = new Date(),
  /** Writes the renewal's audit event in its transaction, for callers outside the contract (EST). */
  record?: (trx: Tx, prepared: PreparedCertificate) => Promise<void>,
) => {
  const { deps } = ctx;
  if (source.status !== "active") throw new BadRequestError("A revoked certificate cannot be renewed");
  if (source.renewed_by_id) throw alreadyRenewed();
  const found = source.profile_id ? await findProfileById(deps.db, source.profile_id) : undefined;
  if (!found) throw new BadRequestError("The certificate's profile no longer exists, so it cannot be renewed");
  const { org_id: _org, ...profile } = found;
  const defaults = defaultsOf(profile);
  const ca = await loadIssuingCa(deps.db, profile, now);
  const lifetime = new Date(source.not_after).getTime() - new Date(source.not_before).getTime();
  const limit = defaults.ttlDays ? defaults.ttlDays * DAY_MS : lifetime;
  const notAfter = notAfterFor(Math.min(lifetime, limit), defaults, ca, now);
  const apiConfig = (await listConfigsOfProfiles(deps.db, [profile.id])).find((c) => c.type === "api");
  const prepared = await prepareCertificate(deps, {
    profile,
    ca,
    commonName: source.common_name,
    altNames: splitAltNames(source.alt_names).map((value) => ({ type: classifyAltName(value) ?? "dns_name", value })),
    keyAlgorithm: key.kind === "csr" ? key.keyAlgorithm : (source.key_algorithm as CertKeyAlgorithm),
    publicKey:
      key.kind === "csr"
        ? key.csr.publicKey
        : key.kind === "same"
          ? new x509.X509Certificate(source.certificate_pem).publicKey
          : undefined,
    notBefore: now,
    notAfter,
    friendlyName: source.friendly_name,
    storeKey: storesPrivateKey(apiConfig?.settings),
    renewedFromId: source.id,
  });
  noteAudit(ctx, { metadata: { renewedCertificateId: prepared.id } });
  await inTransaction(ctx, async (trx) => {
    if (!(await lockRenewable(trx, source.id))) throw alreadyRenewed();
    await insertCertificate(trx, prepared.values);
    await markRenewed(trx, source.id, prepared.id, now);
    await record?.(trx, prepared);
  });
  return prepared;
};

export const renewCertificate = async (ctx: RequestContext, certificateId: string, body: RenewCertificateBody) => {
  const { certificate, ability } = await loadCertificate(ctx, certificateId);
  assertCan(ability, "read", "certificates", permissionObject(certificate));
  const source = await findRenewalSource(ctx.deps.db, certificate.id);
  if (!source) throw new BadRequestError("The certificate was removed meanwhile");
  const profile = source.profile_id ? await findProfileById(ctx.deps.db, source.profile_id) : undefined;
  if (profile) assertCan(ability, "issue-cert", "certificate-profiles", { slug: profile.slug });
  let key: RenewKey = { kind: "generate" };
  if (body.csr) {
    const csr = await parseCsr(body.csr);
    if (!csr) throw new BadRequestError("The CSR is not a valid PKCS#10 request or its signature does not verify");
    const keyAlgorithm = keyAlgorithmOfPublicKey(csr.publicKey);
    if (!keyAlgorithm) throw new BadRequestError(UNSUPPORTED_KEY);
    key = { kind: "csr", csr, keyAlgorithm };
  }
  const prepared = await renewFromSource(ctx, source, key);
  const dto = issuedDto(prepared);
  return body.removeRootsFromChain ? { ...dto, certificateChain: withoutRoots(dto.certificateChain) } : dto;
};
