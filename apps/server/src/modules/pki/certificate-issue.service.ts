import { randomUUID } from "node:crypto";
import {
  classifyAltName,
  parseDuration,
  splitAltNames,
  type CertKeyAlgorithm,
  type IssueCertificateBody,
  type ProfileDefaults,
  type SignatureAlgorithm,
} from "@keyward/contract";
import type { RequestContext } from "../../context";
import { BadRequestError } from "../../errors";
import { toIso } from "../../lib/dates";
import { assertCan } from "../authz/guard";
import { findCaSigningMaterial, type CaSigningRow } from "./ca.repository";
import { signerOfCa } from "./ca.service";
import { insertCertificate } from "./certificate.repository";
import { joinPem } from "./pki-access";
import { listConfigsOfProfiles, type ProfileRow } from "./profile.repository";
import { loadProfile } from "./profile.service";
import {
  buildName,
  defaultSignatureAlgorithm,
  generateKeyPair,
  keyAlgorithmOfPublicKey,
  keyFamilyOf,
  nameAttribute,
  parseCsr,
  randomSerialNumber,
  signCertificate,
  signatureFamilyOf,
  type Signer,
  type x509,
} from "./x509";

const DAY_MS = 24 * 3600 * 1000;
/** Lifetime when neither the request nor the profile names one. */
const DEFAULT_TTL_MS = 90 * DAY_MS;

const loadIssuingCa = async (ctx: RequestContext, profile: ProfileRow, now: Date) => {
  if (profile.issuer_type !== "ca" || !profile.ca_id) return undefined;
  const ca = await findCaSigningMaterial(ctx.deps.db, profile.ca_id);
  if (!ca) throw new BadRequestError(`The CA of profile ${profile.slug} no longer exists`);
  if (ca.status !== "active") throw new BadRequestError(`The CA ${ca.name} is disabled`);
  if (new Date(ca.not_after) <= now) throw new BadRequestError(`The CA ${ca.name} has expired`);
  if (new Date(ca.not_before) > now)
    throw new BadRequestError(`The CA ${ca.name} is not valid before ${toIso(ca.not_before)}`);
  return ca;
};

/** The certificate's lifetime: the request's TTL within the profile's limit, and never past the CA's end. */
const lifetime = (body: IssueCertificateBody, defaults: ProfileDefaults, ca: CaSigningRow | undefined, now: Date) => {
  const limit = defaults.ttlDays ? defaults.ttlDays * DAY_MS : undefined;
  const ttl = body.ttl ? parseDuration(body.ttl)! : (limit ?? DEFAULT_TTL_MS);
  if (limit !== undefined && ttl > limit) {
    throw new BadRequestError(`The requested TTL exceeds the profile's maximum of ${defaults.ttlDays} days`);
  }
  const notAfter = new Date(now.getTime() + ttl);
  if (ca && notAfter > new Date(ca.not_after)) {
    throw new BadRequestError(
      `The requested TTL would outlive the CA ${ca.name}, which expires at ${toIso(ca.not_after)}`,
    );
  }
  return notAfter;
};

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

export const issueCertificate = async (ctx: RequestContext, body: IssueCertificateBody) => {
  const { profile, ability, project } = await loadProfile(ctx, body.profileId);
  assertCan(ability, "issue-cert", "certificate-profiles", { slug: profile.slug });
  if (profile.enrollment_type !== "api") {
    throw new BadRequestError(
      `Profile ${profile.slug} uses ${profile.enrollment_type} enrollment; only API enrollment issues here`,
    );
  }
  const defaults = (profile.defaults as ProfileDefaults | null) ?? {};
  const now = new Date();
  const ca = await loadIssuingCa(ctx, profile, now);

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
  if (!keyAlgorithm)
    throw new BadRequestError(
      "The CSR's key algorithm is not supported; use RSA 2048/3072/4096 or EC P-256/P-384/P-521",
    );

  const commonName = body.commonName ?? (csr ? nameAttribute(csr.subjectName, "CN") : undefined) ?? defaults.commonName;
  if (!commonName)
    throw new BadRequestError(
      "A common name is required: give commonName, or set it in the CSR or the profile defaults",
    );
  const notAfter = lifetime(body, defaults, ca, now);
  const signerKey = (ca?.key_algorithm as CertKeyAlgorithm | undefined) ?? keyAlgorithm;
  const signatureAlgorithm: SignatureAlgorithm = defaults.signatureAlgorithm ?? defaultSignatureAlgorithm(signerKey);
  if (signatureFamilyOf(signatureAlgorithm) !== keyFamilyOf(signerKey)) {
    throw new BadRequestError(`Signature algorithm ${signatureAlgorithm} cannot be made with a ${signerKey} key`);
  }
  const keyUsages =
    defaults.keyUsages ??
    (keyFamilyOf(keyAlgorithm) === "RSA" ? ["digital_signature", "key_encipherment"] : ["digital_signature"]);
  const extendedKeyUsages = defaults.extendedKeyUsages ?? [];
  const altNames = altNamesOf(body, defaults);
  const subject = buildName({
    commonName,
    organization: defaults.organization,
    organizationalUnit: defaults.organizationalUnit,
    country: defaults.country,
    state: defaults.state,
    locality: defaults.locality,
    domainComponents: defaults.domainComponents,
  });

  const generated = csr ? undefined : await generateKeyPair(keyAlgorithm);
  const signer: Signer = ca
    ? signerOfCa(ctx, ca)
    : { privateKeyPem: generated!.privateKeyPem, keyAlgorithm, name: subject };
  const serialNumber = randomSerialNumber();
  const certificate = await signCertificate(
    {
      serialNumber,
      subject,
      publicKey: csr ? csr.publicKey : generated!.publicKey,
      notBefore: now,
      notAfter,
      signatureAlgorithm,
      basicConstraints: defaults.basicConstraints ?? { isCA: false },
      keyUsages,
      extendedKeyUsages,
      altNames,
      customExtensions: defaults.customExtensions,
    },
    signer,
  );
  const certificatePem = certificate.toString("pem");
  const apiConfig = (await listConfigsOfProfiles(ctx.deps.db, [profile.id])).find((c) => c.type === "api");
  const keepKey = Boolean(
    generated && (apiConfig?.settings as { storePrivateKey?: boolean } | undefined)?.storePrivateKey,
  );
  const id = randomUUID();
  const issuingCaCertificate = ca ? ca.certificate_pem : certificatePem;
  const certificateChain = ca ? joinPem(ca.certificate_pem, ca.certificate_chain_pem) : certificatePem;
  const row = await insertCertificate(ctx.deps.db, {
    id,
    project_id: project.id,
    ca_id: ca?.id ?? null,
    profile_id: profile.id,
    serial_number: serialNumber,
    common_name: commonName,
    alt_names: altNames.map((n) => n.value).join(","),
    friendly_name: body.friendlyName ?? commonName,
    key_algorithm: keyAlgorithm,
    signature_algorithm: signatureAlgorithm,
    key_usages: JSON.stringify(keyUsages),
    extended_key_usages: JSON.stringify(extendedKeyUsages),
    not_before: certificate.notBefore,
    not_after: certificate.notAfter,
    certificate_pem: certificatePem,
    issuing_ca_certificate_pem: issuingCaCertificate,
    certificate_chain_pem: certificateChain,
    encrypted_private_key: keepKey
      ? ctx.deps.secretBox.encrypt(generated!.privateKeyPem, `pki-certificate:${id}`)
      : null,
  });
  return {
    certificateId: row.id,
    certificate: certificatePem,
    issuingCaCertificate,
    certificateChain,
    ...(generated ? { privateKey: generated.privateKeyPem } : {}),
    serialNumber,
  };
};
