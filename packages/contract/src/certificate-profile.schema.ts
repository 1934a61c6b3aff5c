import { z } from "zod";
import { isBase64 } from "./base64";
import { CertKeyAlgorithmSchema, subjectFields } from "./certificate-authorities.contract";

/** Value sets, issuance defaults and enrollment configuration inputs of certificate profiles. */
export const EnrollmentTypeSchema = z.enum(["api", "est", "acme", "scep"]);
export type EnrollmentType = z.infer<typeof EnrollmentTypeSchema>;
export const IssuerTypeSchema = z.enum(["ca", "self-signed"]);
export const SignatureAlgorithmSchema = z.enum([
  "RSA-SHA256",
  "RSA-SHA384",
  "RSA-SHA512",
  "ECDSA-SHA256",
  "ECDSA-SHA384",
  "ECDSA-SHA512",
]);
export type SignatureAlgorithm = z.infer<typeof SignatureAlgorithmSchema>;
export const KeyUsageSchema = z.enum([
  "digital_signature",
  "non_repudiation",
  "key_encipherment",
  "data_encipherment",
  "key_agreement",
  "key_cert_sign",
  "crl_sign",
  "encipher_only",
  "decipher_only",
]);
export type KeyUsage = z.infer<typeof KeyUsageSchema>;
export const ExtendedKeyUsageSchema = z.enum([
  "server_auth",
  "client_auth",
  "code_signing",
  "email_protection",
  "timestamping",
  "ocsp_signing",
]);
export type ExtendedKeyUsage = z.infer<typeof ExtendedKeyUsageSchema>;
export const AltNameTypeSchema = z.enum(["dns_name", "ip_address", "email", "uri"]);
export type AltNameType = z.infer<typeof AltNameTypeSchema>;

const HOSTNAME = /^(\*\.)?([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/i;
const isIp = (v: string) => z.string().ip().safeParse(v).success;
const isEmail = (v: string) => z.string().email().safeParse(v).success;
const isUri = (v: string) => /^[a-z][a-z0-9+.-]*:\/\/\S+$/i.test(v) && z.string().url().safeParse(v).success;

export const isValidAltName = (type: AltNameType, value: string) => {
  if (value.length === 0 || value.length > 253) return false;
  if (type === "dns_name") return HOSTNAME.test(value);
  if (type === "ip_address") return isIp(value);
  if (type === "email") return isEmail(value);
  return isUri(value);
};

/** A bare alternative name (as in a comma-separated `altNames`) typed by its shape; undefined when it fits none. */
export const classifyAltName = (value: string): AltNameType | undefined => {
  if (isIp(value)) return "ip_address";
  if (value.includes("@")) return isEmail(value) ? "email" : undefined;
  if (value.includes("://")) return isUri(value) ? "uri" : undefined;
  return isValidAltName("dns_name", value) ? "dns_name" : undefined;
};

const OID = /^[0-2](\.(0|[1-9][0-9]{0,9})){1,30}$/;

const AltNameSchema = z
  .object({ type: AltNameTypeSchema, value: z.string().trim().min(1).max(253) })
  .refine((san) => isValidAltName(san.type, san.value), {
    message: "Value does not match its subject alternative name type",
    path: ["value"],
  });

export const ProfileDefaultsSchema = z
  .object({
    ttlDays: z.number().int().min(1).max(36_500).optional(),
    commonName: subjectFields.commonName.optional(),
    keyAlgorithm: CertKeyAlgorithmSchema.optional(),
    signatureAlgorithm: SignatureAlgorithmSchema.optional(),
    organization: subjectFields.organization.optional(),
    organizationalUnit: subjectFields.organizationalUnit.optional(),
    country: subjectFields.country.optional(),
    state: subjectFields.state.optional(),
    locality: subjectFields.locality.optional(),
    keyUsages: z.array(KeyUsageSchema).max(9).optional(),
    extendedKeyUsages: z.array(ExtendedKeyUsageSchema).max(6).optional(),
    basicConstraints: z
      .object({ isCA: z.boolean(), pathLength: z.number().int().min(0).max(16).optional() })
      .optional(),
    subjectAltNames: z.array(AltNameSchema).max(32).optional(),
    domainComponents: z
      .array(
        z
          .string()
          .trim()
          .min(1)
          .max(63)
          .regex(/^[A-Za-z0-9-]+$/),
      )
      .max(8)
      .optional(),
    customExtensions: z
      .array(
        z.object({
          oid: z
            .string()
            .trim()
            .regex(OID, "Must be a dotted object identifier")
            .refine(
              (oid) => !oid.startsWith("2.5.29."),
              "Standard certificate extensions (2.5.29.*) are set from the other defaults",
            ),
          label: z.string().trim().max(64).default(""),
          value: z
            .string()
            .trim()
            .min(1)
            .max(4096)
            .refine(isBase64, "Must be the base64 DER encoding of the extension value"),
          critical: z.boolean().default(false),
        }),
      )
      .max(8)
      .optional(),
  })
  .superRefine((d, ctx) => {
    const caOnly = (d.keyUsages ?? []).filter((u) => u === "key_cert_sign" || u === "crl_sign");
    if (caOnly.length > 0 && !d.basicConstraints?.isCA) {
      ctx.addIssue({
        code: "custom",
        path: ["keyUsages"],
        message: "key_cert_sign and crl_sign need basicConstraints.isCA",
      });
    }
    if (d.basicConstraints && !d.basicConstraints.isCA && d.basicConstraints.pathLength !== undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["basicConstraints", "pathLength"],
        message: "pathLength applies only when isCA is true",
      });
    }
    const oids = (d.customExtensions ?? []).map((e) => e.oid);
    if (new Set(oids).size !== oids.length) {
      ctx.addIssue({
        code: "custom",
        path: ["customExtensions"],
        message: "Each custom extension OID may appear once",
      });
    }
  });
export type ProfileDefaults = z.infer<typeof ProfileDefaultsSchema>;

export const EstConfigInputSchema = z
  .object({
    passphrase: z.string().min(1).max(256),
    caChain: z.string().trim().max(65_536).optional(),
    disableBootstrapCaValidation: z.boolean().default(false),
  })
  .refine((cfg) => cfg.disableBootstrapCaValidation || Boolean(cfg.caChain), {
    message: "caChain is required unless bootstrap CA validation is disabled",
    path: ["caChain"],
  });
/** On update the passphrase may be left out to keep the stored one. */
export const EstConfigUpdateSchema = z
  .object({
    passphrase: z.string().min(1).max(256).optional(),
    caChain: z.string().trim().max(65_536).optional(),
    disableBootstrapCaValidation: z.boolean().default(false),
  })
  .refine((cfg) => cfg.disableBootstrapCaValidation || Boolean(cfg.caChain), {
    message: "caChain is required unless bootstrap CA validation is disabled",
    path: ["caChain"],
  });
export const ApiConfigInputSchema = z.object({
  autoRenew: z.boolean().default(false),
  renewBeforeDays: z.number().int().min(1).max(365).optional(),
  /** Keep an encrypted copy of keys Keyward generates, readable later with certificates read-private-key. */
  storePrivateKey: z.boolean().default(false),
});
export const AcmeConfigInputSchema = z.object({
  skipDnsOwnershipVerification: z.boolean().default(false),
  skipEabBinding: z.boolean().default(false),
});
export const scepFields = {
  challengeType: z.enum(["static", "dynamic"]).default("static"),
  challengePassword: z.string().min(1).max(256).optional(),
  includeCaCertInResponse: z.boolean().default(true),
  allowCertBasedRenewal: z.boolean().default(true),
  dynamicChallengeExpiryMinutes: z.number().int().min(1).max(1440).default(60),
  dynamicChallengeMaxPending: z.number().int().min(1).max(1000).default(100),
};
export const ScepConfigInputSchema = z
  .object(scepFields)
  .refine((cfg) => cfg.challengeType === "dynamic" || Boolean(cfg.challengePassword), {
    message: "A static challenge needs challengePassword",
    path: ["challengePassword"],
  });
export type EstConfigInput = z.infer<typeof EstConfigUpdateSchema>;
export type ApiConfigInput = z.infer<typeof ApiConfigInputSchema>;
export type AcmeConfigInput = z.infer<typeof AcmeConfigInputSchema>;
export type ScepConfigInput = z.infer<typeof ScepConfigInputSchema>;
