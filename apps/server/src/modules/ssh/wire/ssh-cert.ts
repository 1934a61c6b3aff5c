import { constants, randomBytes, sign, type KeyObject } from "node:crypto";
import { parsePublicKeyBlob, publicBlobOf, type SshPublicKey } from "./ssh-keys";
import { SshKeyError, SshReader, SshWriter } from "./ssh-wire";

/**
 * OpenSSH certificates. The signed body is: string(certificate type), string(nonce), the subject key's
 * fields exactly as they follow the type in its public blob, uint64 serial, uint32 kind (1 user, 2 host),
 * string(key id), string(principals, each a string), uint64 valid-after, uint64 valid-before (seconds),
 * string(critical options), string(extensions) — each a run of name/data string pairs in byte order of
 * the name, an option's data being a string holding its value and a flag's data empty — string(reserved,
 * empty), string(CA public blob). The certificate is that body followed by string(signature blob).
 */

export type SshCertType = "user" | "host";

export const DEFAULT_USER_EXTENSIONS: readonly string[] = [
  "permit-X11-forwarding",
  "permit-agent-forwarding",
  "permit-port-forwarding",
  "permit-pty",
  "permit-user-rc",
];

export type SignCertificateInput = {
  caPrivateKey: KeyObject;
  caPublicBlob: Buffer;
  /** A key from `parsePublicKeyLine` or `generateSshKeyPair`; its blob is checked again here. */
  subject: SshPublicKey | { type: string; blob: Buffer };
  serial: bigint;
  certType: SshCertType;
  keyId: string;
  /** Never empty: an empty list would let the certificate stand for every principal. */
  principals: string[];
  validAfter: Date;
  validBefore: Date;
  /** Flag extensions by name; user certificates default to the five usual ones, host certificates to none. */
  extensions?: string[];
  /** Option name to value, for example `force-command` or `source-address`. */
  criticalOptions?: Record<string, string>;
  /** Appended to the line after a space when given. */
  comment?: string;
};

const NONCE_BYTES = 32;
const UINT64_MAX = (1n << 64n) - 1n;

/** A random 63-bit serial (top bit cleared), never zero since a KRL cannot list serial 0. */
export const randomSerial = (): bigint => {
  for (;;) {
    const serial = randomBytes(8).readBigUInt64BE() & 0x7fff_ffff_ffff_ffffn;
    if (serial !== 0n) return serial;
  }
};

/** The certificate type that carries a plain key type: `ssh-ed25519` → `ssh-ed25519-cert-v01@openssh.com`. */
export const certTypeName = (keyType: string): string =>
  `${keyType.replace(/@openssh\.com$/, "")}-cert-v01@openssh.com`;

const byName = (a: string, b: string) => Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8"));

/** Name/data pairs, sorted by name, each name once. */
const optionList = (pairs: [string, Buffer][], what: string): Buffer => {
  const w = new SshWriter();
  const sorted = [...pairs].sort(([a], [b]) => byName(a, b));
  sorted.forEach(([name, data], i) => {
    if (!name) throw new SshKeyError(`an empty ${what} name`);
    if (i > 0 && sorted[i - 1]![0] === name) throw new SshKeyError(`the ${what} ${name} is given twice`);
    w.string(name).string(data);
  });
  return w.toBuffer();
};

const seconds = (date: Date, what: string): bigint => {
  const ms = date.getTime();
  if (!Number.isFinite(ms) || ms < 0) throw new SshKeyError(`${what} is not a valid time`);
  return BigInt(Math.floor(ms / 1000));
};

/** The signature blob of the CA over `data`: Ed25519, ECDSA with the curve's hash, or RSA with SHA-512. */
const signatureBlob = (ca: KeyObject, data: Buffer): Buffer => {
  const w = new SshWriter();
  switch (ca.asymmetricKeyType) {
    case "ed25519":
      return w
        .string("ssh-ed25519")
        .string(sign(null, data, ca))
        .toBuffer();
    case "ec": {
      const curve = ca.asymmetricKeyDetails?.namedCurve;
      const [name, hash] =
        curve === "prime256v1"
          ? ["ecdsa-sha2-nistp256", "sha256"]
          : curve === "secp384r1"
            ? ["ecdsa-sha2-nistp384", "sha384"]
            : curve === "secp521r1"
              ? ["ecdsa-sha2-nistp521", "sha512"]
              : [];
      if (!name || !hash) throw new SshKeyError(`unsupported CA curve ${curve ?? "(none)"}`);
      const rs = sign(hash, data, { key: ca, dsaEncoding: "ieee-p1363" });
      const half = rs.length / 2;
      const inner = new SshWriter().mpint(rs.subarray(0, half)).mpint(rs.subarray(half)).toBuffer();
      return w.string(name).string(inner).toBuffer();
    }
    case "rsa": {
      const sig = sign("sha512", data, { key: ca, padding: constants.RSA_PKCS1_PADDING });
      return w.string("rsa-sha2-512").string(sig).toBuffer();
    }
    default:
      throw new SshKeyError(`unsupported CA key type ${ca.asymmetricKeyType ?? "(none)"}`);
  }
};

/**
 * Signs an OpenSSH certificate for `subject` and returns its line, `<type>-cert-v01@openssh.com <base64>`
 * (plus the comment). Throws `SshKeyError` on a bad subject key or bad fields (no principals, an empty
 * principal, a validity that ends before it starts, a repeated option); a CA private key that does not
 * match `caPublicBlob` is a plain `Error` (the caller's data is inconsistent).
 */
export const signCertificate = (input: SignCertificateInput): string => {
  const { caPrivateKey, caPublicBlob, subject, serial, certType, keyId, principals } = input;
  if (caPrivateKey.type !== "private") throw new Error("the CA key must be a private key");
  if (!publicBlobOf(caPrivateKey).equals(caPublicBlob)) {
    throw new Error("the CA private key does not match the CA public key blob");
  }
  const { type } = parsePublicKeyBlob(subject.blob);
  if (type !== subject.type) throw new SshKeyError(`the subject says ${subject.type} but its key is ${type}`);
  if (serial < 0n || serial > UINT64_MAX) throw new SshKeyError("the serial must fit in 64 bits");
  if (certType !== "user" && certType !== "host") throw new SshKeyError("the certificate type is user or host");
  if (principals.length === 0) throw new SshKeyError("a certificate needs at least one principal");
  if (principals.some((p) => p.length === 0)) throw new SshKeyError("a principal cannot be empty");
  const after = seconds(input.validAfter, "validAfter");
  const before = seconds(input.validBefore, "validBefore");
  if (before <= after) throw new SshKeyError("validBefore must be later than validAfter");

  const extensions = input.extensions ?? (certType === "user" ? DEFAULT_USER_EXTENSIONS : []);
  const critical = Object.entries(input.criticalOptions ?? {});
  const principalList = new SshWriter();
  for (const p of principals) principalList.string(p);

  const subjectReader = new SshReader(subject.blob);
  subjectReader.string();
  const subjectFields = subject.blob.subarray(subjectReader.consumed().length);

  const body = new SshWriter()
    .string(certTypeName(type))
    .string(randomBytes(NONCE_BYTES))
    .raw(subjectFields)
    .uint64(serial)
    .uint32(certType === "user" ? 1 : 2)
    .string(keyId)
    .string(principalList.toBuffer())
    .uint64(after)
    .uint64(before)
    .string(
      optionList(
        critical.map(([name, value]) => [name, new SshWriter().string(value).toBuffer()]),
        "critical option",
      ),
    )
    .string(
      optionList(
        extensions.map((name) => [name, Buffer.alloc(0)]),
        "extension",
      ),
    )
    .string("")
    .string(caPublicBlob)
    .toBuffer();
  const cert = Buffer.concat([body, new SshWriter().string(signatureBlob(caPrivateKey, body)).toBuffer()]);
  const line = `${certTypeName(type)} ${cert.toString("base64")}`;
  return input.comment ? `${line} ${input.comment}` : line;
};
