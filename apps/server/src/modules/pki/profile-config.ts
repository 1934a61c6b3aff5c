import { randomBytes, randomUUID } from "node:crypto";
import type {
  AcmeConfigInput,
  ApiConfigInput,
  CertificateProfile,
  EnrollmentType,
  EstConfigInput,
  ScepConfigInput,
} from "@keyward/contract";
import type { RequestContext } from "../../context";
import { hashPassword } from "../../crypto/tokens";
import { toIso } from "../../lib/dates";
import { BadRequestError } from "../../errors";
import type { EnrollmentConfigRow } from "./profile.repository";
import { x509 } from "./x509";

export type ConfigInputs = {
  estConfig?: EstConfigInput;
  apiConfig?: ApiConfigInput;
  acmeConfig?: AcmeConfigInput;
  scepConfig?: ScepConfigInput;
};

export const CONFIG_KEY = { api: "apiConfig", est: "estConfig", acme: "acmeConfig", scep: "scepConfig" } as const;
export const CONFIG_LABEL = { api: "API", est: "EST", acme: "ACME", scep: "SCEP" } as const;

/** Defaults for the enrollment types whose configuration may be left out. */
const DEFAULT_INPUT: Partial<Record<EnrollmentType, object>> = {
  api: { autoRenew: false, storePrivateKey: false },
  acme: { skipDnsOwnershipVerification: false, skipEabBinding: false },
};

const assertPemCertificates = (pem: string) => {
  try {
    const blocks = x509.PemConverter.decode(pem);
    if (blocks.length === 0) throw new Error("no PEM blocks");
    for (const block of blocks) new x509.X509Certificate(block);
  } catch {
    throw new BadRequestError("caChain must hold one or more PEM certificates");
  }
};

export type PreparedConfig = { settings: Record<string, unknown>; secret?: string };

/**
 * The stored form of one enrollment configuration: settings as JSON and the secret (EST passphrase,
 * static SCEP challenge) apart, to be encrypted. `hasStoredSecret` lets an update keep the old secret.
 */
export const prepareConfig = (
  type: EnrollmentType,
  inputs: ConfigInputs,
  hasStoredSecret = false,
): PreparedConfig | undefined => {
  const input = (inputs[CONFIG_KEY[type]] ?? DEFAULT_INPUT[type]) as Record<string, unknown> | undefined;
  if (!input) return undefined;
  if (type === "est") {
    const { passphrase, ...settings } = input as EstConfigInput;
    if (settings.caChain) assertPemCertificates(settings.caChain);
    if (!passphrase && !hasStoredSecret) throw new BadRequestError("EST enrollment needs a passphrase");
    return { settings, secret: passphrase };
  }
  if (type === "scep") {
    const { challengePassword, ...settings } = input as ScepConfigInput;
    if (settings.challengeType === "static" && !challengePassword && !hasStoredSecret) {
      throw new BadRequestError("A static SCEP challenge needs challengePassword");
    }
    return { settings, secret: settings.challengeType === "static" ? challengePassword : undefined };
  }
  // The ACME external account binding key: made once, kept across updates, replaced only by a rotation.
  if (type === "acme") return { settings: input, secret: hasStoredSecret ? undefined : newEabSecret() };
  return { settings: input };
};

/**
 * A fresh HMAC key for ACME external account binding, base64url as clients take it. A key never
 * starts with "-": certbot and lego read `--eab-hmac-key -abc…` as a missing value and a new option.
 */
export const newEabSecret = (): string => {
  for (;;) {
    const key = randomBytes(32).toString("base64url");
    if (!key.startsWith("-")) return key;
  }
};

export const acmeDirectoryPath = (profileId: string) => `/api/v1/cert-manager/acme/profiles/${profileId}/directory`;

export const encryptConfigSecret = (ctx: RequestContext, configId: string, secret: string) =>
  ctx.deps.secretBox.encrypt(secret, `pki-enrollment:${configId}`);

/**
 * How a configuration's secret is stored: the EST passphrase and the ACME key sealed (Keyward shows or
 * uses them), the static SCEP challenge as an scrypt hash (only ever compared).
 */
export const storedConfigSecret = (ctx: RequestContext, type: EnrollmentType, configId: string, secret: string) =>
  type === "scep" ? hashPassword(secret) : Promise.resolve(encryptConfigSecret(ctx, configId, secret));

export const newConfigRow = async (
  ctx: RequestContext,
  profileId: string,
  type: EnrollmentType,
  prepared: PreparedConfig,
) => {
  const id = randomUUID();
  return {
    id,
    profile_id: profileId,
    type,
    settings: JSON.stringify(prepared.settings),
    encrypted_secret: prepared.secret ? await storedConfigSecret(ctx, type, id, prepared.secret) : null,
  };
};

/** Where a SCEP profile's clients and its challenge issuers go. */
export const scepEndpointPath = (profileId: string) => `/api/v1/cert-manager/scep/profiles/${profileId}/pkiclient.exe`;
export const scepChallengePath = (profileId: string) =>
  `/api/v1/cert-manager/certificate-profiles/${profileId}/scep/challenges`;

/** A SCEP profile's current RA certificate, as profiles show it. */
export type ScepRaView = { certificatePem: string; notAfter: Date | string };

type ConfigDtos = Pick<
  CertificateProfile,
  | "estConfigId"
  | "apiConfigId"
  | "acmeConfigId"
  | "scepConfigId"
  | "estConfig"
  | "apiConfig"
  | "acmeConfig"
  | "scepConfig"
>;

/** Configuration ids and objects as a profile shows them; secrets never leave. */
export const toConfigDtos = (
  profileId: string,
  configs: EnrollmentConfigRow[],
  publicUrl: string,
  ra?: ScepRaView,
): ConfigDtos => {
  const out: ConfigDtos = { estConfigId: null, apiConfigId: null, acmeConfigId: null, scepConfigId: null };
  for (const config of configs) {
    const s = config.settings;
    if (config.type === "est") {
      out.estConfigId = config.id;
      out.estConfig = {
        id: config.id,
        disableBootstrapCaValidation: Boolean(s.disableBootstrapCaValidation),
        caChain: typeof s.caChain === "string" ? s.caChain : null,
      };
    } else if (config.type === "api") {
      out.apiConfigId = config.id;
      out.apiConfig = {
        id: config.id,
        autoRenew: Boolean(s.autoRenew),
        renewBeforeDays: typeof s.renewBeforeDays === "number" ? s.renewBeforeDays : null,
        storePrivateKey: Boolean(s.storePrivateKey),
      };
    } else if (config.type === "acme") {
      out.acmeConfigId = config.id;
      out.acmeConfig = {
        id: config.id,
        directoryUrl: `${publicUrl}${acmeDirectoryPath(profileId)}`,
        skipDnsOwnershipVerification: Boolean(s.skipDnsOwnershipVerification),
        skipEabBinding: Boolean(s.skipEabBinding),
      };
    } else if (config.type === "scep") {
      out.scepConfigId = config.id;
      const dynamic = s.challengeType === "dynamic";
      out.scepConfig = {
        id: config.id,
        scepEndpointUrl: `${publicUrl}${scepEndpointPath(profileId)}`,
        raCertificatePem: ra?.certificatePem ?? null,
        raCertExpiresAt: ra ? toIso(ra.notAfter) : null,
        challengeType: dynamic ? "dynamic" : "static",
        challengeEndpointUrl: dynamic ? `${publicUrl}${scepChallengePath(profileId)}` : null,
        includeCaCertInResponse: s.includeCaCertInResponse !== false,
        allowCertBasedRenewal: s.allowCertBasedRenewal !== false,
        dynamicChallengeExpiryMinutes: Number(s.dynamicChallengeExpiryMinutes ?? 60),
        dynamicChallengeMaxPending: Number(s.dynamicChallengeMaxPending ?? 100),
      };
    }
  }
  return out;
};
