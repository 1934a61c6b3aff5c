import { initContract } from "@ts-rest/core";
import { z } from "zod";
import { parseDuration } from "./duration";
import { ProjectIdInput } from "./folders.contract";

/** The pieces the SSH contracts (CAs and certificates, hosts and host groups) share. */

const c = initContract();

/** Key algorithms of SSH CAs and issued keys. */
export const SshKeyAlgorithmSchema = z.enum(["ED25519", "EC_prime256v1", "EC_secp384r1", "RSA_2048", "RSA_4096"]);
export type SshKeyAlgorithmName = z.infer<typeof SshKeyAlgorithmSchema>;
export const SshStatusSchema = z.enum(["active", "disabled"]);
export const SshCertTypeSchema = z.enum(["user", "host"]);

export const ProjectIdParam = z.object({ projectId: ProjectIdInput });

/** A duration as `ms` reads it ("1h", "30d"), positive. */
export const DurationInput = z
  .string()
  .trim()
  .min(1)
  .max(32)
  .refine((v) => (parseDuration(v) ?? 0) > 0, "Must be a positive duration such as 1h or 30d");

/** A login user name, or `*` in a template: letters, digits, `_` and `-`, at most 32. */
export const USER_NAME = /^(?:\*|[a-z_][a-z0-9_-]{0,31})$/i;

export const SignedSchema = z.object({
  serialNumber: z.string(),
  signedKey: z.string(),
  /** Keyward: the certificate's record, for revocation. */
  certificateId: z.string(),
});

export const IssuedSchema = SignedSchema.extend({
  privateKey: z.string(),
  publicKey: z.string(),
  keyAlgorithm: SshKeyAlgorithmSchema,
});

/** A public key line, as the file a host or client trusts holds it. */
export const publicKeyLine = c.otherResponse({ contentType: "text/plain", body: z.string() });
