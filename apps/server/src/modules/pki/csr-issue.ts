import { isValidAltName, type CertKeyAlgorithm } from "@keyward/contract";
import type { AppDeps } from "../../context";
import { defaultsOf, loadIssuingCa, notAfterFor, prepareCertificate, type AltName } from "./issuance";
import type { ProfileRow } from "./profile.repository";
import { csrAltNames, nameAttribute, type x509 } from "./x509";

/** How an enrolment protocol refuses a request it can read (EST: a 400 text; SCEP: a badRequest CertRep). */
export type Refuse = (message: string) => Error;

const SAN_TYPES: Record<string, string> = { dns: "dns_name", ip: "ip_address", email: "email", url: "uri" };

/** A CSR's alternative names in a profile's terms; a kind no certificate carries is refused. */
export const altNamesOfCsr = (csr: x509.Pkcs10CertificateRequest, refuse: Refuse): AltName[] =>
  csrAltNames(csr).map((n) => {
    const type = SAN_TYPES[n.type];
    if (!type || !isValidAltName(type as "dns_name", n.value)) {
      throw refuse(`The CSR names an unsupported or invalid alternative name (${n.type})`);
    }
    return { type, value: n.value };
  });

/**
 * A certificate for an enrolment protocol's CSR under its profile's policy, prepared (not stored): the
 * profile's key algorithm, the CSR's common name (or the profile's), the CSR's names with the
 * profile's default names added, the profile's lifetime. The key stays with the client.
 */
export const prepareForCsr = async (
  deps: AppDeps,
  profile: ProfileRow,
  request: { csr: x509.Pkcs10CertificateRequest; keyAlgorithm: CertKeyAlgorithm; now: Date },
  refuse: Refuse,
) => {
  const { csr, keyAlgorithm, now } = request;
  const defaults = defaultsOf(profile);
  if (defaults.keyAlgorithm && defaults.keyAlgorithm !== keyAlgorithm) {
    throw refuse(`This profile issues only for ${defaults.keyAlgorithm} keys`);
  }
  const commonName = nameAttribute(csr.subjectName, "CN") ?? defaults.commonName;
  if (!commonName) throw refuse("The CSR needs a common name");
  const requested = altNamesOfCsr(csr, refuse);
  const ca = await loadIssuingCa(deps.db, profile, now);
  const seen = new Set(requested.map((n) => `${n.type}:${n.value.toLowerCase()}`));
  const prepared = await prepareCertificate(deps, {
    profile,
    ca,
    commonName,
    altNames: [
      ...requested,
      ...(defaults.subjectAltNames ?? []).filter((n) => !seen.has(`${n.type}:${n.value.toLowerCase()}`)),
    ],
    keyAlgorithm,
    publicKey: csr.publicKey,
    notBefore: now,
    notAfter: notAfterFor(undefined, defaults, ca, now),
    friendlyName: commonName,
    storeKey: false,
  });
  return { prepared, commonName };
};
