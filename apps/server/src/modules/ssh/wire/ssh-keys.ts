import {
  createHash,
  createPublicKey,
  generateKeyPair,
  generateKeyPairSync,
  randomBytes,
  type KeyObject,
} from "node:crypto";
import { SshKeyError, SshReader, SshWriter } from "./ssh-wire";

/**
 * SSH public keys (blobs and `authorized_keys`-style lines), fingerprints, key generation and the
 * unencrypted `openssh-key-v1` private-key file, all on `node:crypto` through JWK export and import.
 *
 * A public-key blob is a string naming the key type followed by the type's fields:
 * - `ssh-ed25519`: string(32-byte public key);
 * - `ecdsa-sha2-nistpNNN`: string(curve id `nistpNNN`), string(uncompressed point 0x04‖x‖y);
 * - `ssh-rsa`: mpint(e), mpint(n);
 * - the security-key (FIDO) types: the Ed25519 or P-256 fields, then string(application).
 */

export type SshKeyAlgorithm = "ED25519" | "EC_prime256v1" | "EC_secp384r1" | "RSA_2048" | "RSA_4096";
export const SSH_KEY_ALGORITHMS: readonly SshKeyAlgorithm[] = [
  "ED25519",
  "EC_prime256v1",
  "EC_secp384r1",
  "RSA_2048",
  "RSA_4096",
];

/** The plain public-key types accepted as certificate subjects. */
export type SshPublicKeyType =
  | "ssh-ed25519"
  | "ecdsa-sha2-nistp256"
  | "ecdsa-sha2-nistp384"
  | "ecdsa-sha2-nistp521"
  | "ssh-rsa"
  | "sk-ssh-ed25519@openssh.com"
  | "sk-ecdsa-sha2-nistp256@openssh.com";

export type SshPublicKey = { type: SshPublicKeyType; blob: Buffer };
export type ParsedPublicKeyLine = SshPublicKey & { comment: string; bits?: number };
export type SshKeyPair = { privateKey: KeyObject; publicKeyBlob: Buffer; publicKeyLine: string };

const SK_ED25519 = "sk-ssh-ed25519@openssh.com";
const SK_ECDSA = "sk-ecdsa-sha2-nistp256@openssh.com";
export const RSA_MIN_BITS = 2048;
/** OpenSSH refuses larger RSA moduli. */
const RSA_MAX_BITS = 16384;
const MAX_LINE_LENGTH = 16 * 1024;

type Curve = { jwk: "P-256" | "P-384" | "P-521"; id: string; size: number };
const CURVES: Record<string, Curve> = {
  nistp256: { jwk: "P-256", id: "nistp256", size: 32 },
  nistp384: { jwk: "P-384", id: "nistp384", size: 48 },
  nistp521: { jwk: "P-521", id: "nistp521", size: 66 },
};
const curveOfJwk = (crv: string | undefined): Curve => {
  const curve = Object.values(CURVES).find((c) => c.jwk === crv);
  if (!curve) throw new SshKeyError(`unsupported elliptic curve ${crv ?? "(none)"}`);
  return curve;
};

/** A JWK member as bytes, left-padded with zeros to `size` when given. */
const jwkBytes = (value: string | undefined, size = 0): Buffer => {
  if (value === undefined) throw new SshKeyError("the key lacks a component");
  const bytes = Buffer.from(value, "base64url");
  return bytes.length >= size ? bytes : Buffer.concat([Buffer.alloc(size - bytes.length), bytes]);
};
const b64url = (bytes: Buffer) => bytes.toString("base64url");

const publicOf = (key: KeyObject): KeyObject => (key.type === "private" ? createPublicKey(key) : key);

/** The SSH public-key blob of an Ed25519, ECDSA (P-256/384/521) or RSA key, private or public. */
export const publicBlobOf = (key: KeyObject): Buffer => {
  const pub = publicOf(key);
  const jwk = pub.export({ format: "jwk" });
  const w = new SshWriter();
  switch (pub.asymmetricKeyType) {
    case "ed25519":
      return w.string("ssh-ed25519").string(jwkBytes(jwk.x)).toBuffer();
    case "ec": {
      const curve = curveOfJwk(jwk.crv);
      const point = Buffer.concat([Buffer.from([4]), jwkBytes(jwk.x, curve.size), jwkBytes(jwk.y, curve.size)]);
      return w.string(`ecdsa-sha2-${curve.id}`).string(curve.id).string(point).toBuffer();
    }
    case "rsa":
      return w.string("ssh-rsa").mpint(jwkBytes(jwk.e)).mpint(jwkBytes(jwk.n)).toBuffer();
    default:
      throw new SshKeyError(`unsupported key type ${pub.asymmetricKeyType ?? "(none)"}`);
  }
};

/** The key type named at the start of a blob (not validated further). */
export const keyTypeOfBlob = (blob: Buffer): string => new SshReader(blob, "the key blob").name();

/** `<type> <base64>` with ` <comment>` when one is given. */
export const publicKeyLineOf = (blob: Buffer, comment = ""): string => {
  const line = `${keyTypeOfBlob(blob)} ${blob.toString("base64")}`;
  return comment ? `${line} ${comment}` : line;
};

/** As `ssh-keygen -l` prints it: `SHA256:` and the unpadded base64 of the blob's SHA-256. */
export const fingerprintSha256 = (blob: Buffer): string =>
  `SHA256:${createHash("sha256").update(blob).digest("base64").replace(/=+$/, "")}`;

/** The algorithm of a stored CA key (private or public); other keys throw `SshKeyError`. */
export const algorithmOfKeyObject = (key: KeyObject): SshKeyAlgorithm => {
  const details = key.asymmetricKeyDetails ?? {};
  if (key.asymmetricKeyType === "ed25519") return "ED25519";
  if (key.asymmetricKeyType === "ec" && details.namedCurve === "prime256v1") return "EC_prime256v1";
  if (key.asymmetricKeyType === "ec" && details.namedCurve === "secp384r1") return "EC_secp384r1";
  if (key.asymmetricKeyType === "rsa" && details.modulusLength === 2048) return "RSA_2048";
  if (key.asymmetricKeyType === "rsa" && details.modulusLength === 4096) return "RSA_4096";
  const shape = details.namedCurve ?? (details.modulusLength ? `${details.modulusLength} bits` : "");
  throw new SshKeyError(`unsupported key: ${key.asymmetricKeyType ?? "unknown"} ${shape}`.trim());
};

const pairOf = (privateKey: KeyObject, comment: string): SshKeyPair => {
  const publicKeyBlob = publicBlobOf(privateKey);
  return { privateKey, publicKeyBlob, publicKeyLine: publicKeyLineOf(publicKeyBlob, comment) };
};

/** A new key pair (RSA with e = 65537). RSA-4096 takes a second or more: prefer the async form in a server. */
export const generateSshKeyPair = (algorithm: SshKeyAlgorithm, comment = ""): SshKeyPair => {
  switch (algorithm) {
    case "ED25519":
      return pairOf(generateKeyPairSync("ed25519").privateKey, comment);
    case "EC_prime256v1":
    case "EC_secp384r1":
      return pairOf(generateKeyPairSync("ec", { namedCurve: algorithm.slice(3) }).privateKey, comment);
    case "RSA_2048":
    case "RSA_4096": {
      const modulusLength = algorithm === "RSA_2048" ? 2048 : 4096;
      return pairOf(generateKeyPairSync("rsa", { modulusLength, publicExponent: 0x10001 }).privateKey, comment);
    }
  }
};

/** `generateSshKeyPair` off the event loop (node's thread pool). */
export const generateSshKeyPairAsync = (algorithm: SshKeyAlgorithm, comment = ""): Promise<SshKeyPair> =>
  new Promise((resolve, reject) => {
    const done = (err: Error | null, _pub: KeyObject, priv: KeyObject) =>
      err ? reject(err) : resolve(pairOf(priv, comment));
    if (algorithm === "ED25519") generateKeyPair("ed25519", {}, done);
    else if (algorithm === "EC_prime256v1" || algorithm === "EC_secp384r1") {
      generateKeyPair("ec", { namedCurve: algorithm.slice(3) }, done);
    } else {
      const modulusLength = algorithm === "RSA_2048" ? 2048 : 4096;
      generateKeyPair("rsa", { modulusLength, publicExponent: 0x10001 }, done);
    }
  });

/** node:crypto must accept the key; its own message is no use to a client. */
const mustImport = (jwk: Record<string, string>, what: string) => {
  try {
    createPublicKey({ key: jwk, format: "jwk" });
  } catch {
    throw new SshKeyError(`the ${what} key is not a valid public key`);
  }
};

const readEcPoint = (r: SshReader, expectedCurve: string, what: string) => {
  const curveId = r.name();
  const curve = CURVES[curveId];
  if (!curve || curveId !== expectedCurve) throw new SshKeyError(`the ${what} key names the wrong curve`);
  const point = r.string();
  if (point.length !== 1 + 2 * curve.size || point[0] !== 4) {
    throw new SshKeyError(`the ${what} key's point is not an uncompressed ${curveId} point`);
  }
  const x = point.subarray(1, 1 + curve.size);
  const y = point.subarray(1 + curve.size);
  mustImport({ kty: "EC", crv: curve.jwk, x: b64url(x), y: b64url(y) }, what);
};

const readEd25519 = (r: SshReader, what: string) => {
  const pk = r.string();
  if (pk.length !== 32) throw new SshKeyError(`the ${what} key is not 32 bytes long`);
  mustImport({ kty: "OKP", crv: "Ed25519", x: b64url(pk) }, what);
};

const readApplication = (r: SshReader) => {
  const application = r.name();
  if (!application.startsWith("ssh:")) throw new SshKeyError('a security key\'s application must start with "ssh:"');
};

const refuseType = (type: string): never => {
  if (type === "ssh-dss") throw new SshKeyError("DSA (ssh-dss) keys are not accepted");
  if (type.includes("-cert-v0")) throw new SshKeyError("a certificate is not accepted here: give the plain public key");
  throw new SshKeyError(`unsupported key type ${JSON.stringify(type.slice(0, 64))}`);
};

/**
 * Checks a public-key blob of an accepted type field by field (no trailing bytes, valid point or key,
 * RSA of at least 2048 bits) and returns its type and, for RSA, its size.
 */
export const parsePublicKeyBlob = (blob: Buffer): { type: SshPublicKeyType; bits?: number } => {
  const r = new SshReader(blob, "the key blob");
  const type = r.name();
  let bits: number | undefined;
  switch (type) {
    case "ssh-ed25519":
      readEd25519(r, "Ed25519");
      break;
    case "ecdsa-sha2-nistp256":
    case "ecdsa-sha2-nistp384":
    case "ecdsa-sha2-nistp521":
      readEcPoint(r, type.slice("ecdsa-sha2-".length), "ECDSA");
      break;
    case "ssh-rsa": {
      const e = r.mpint();
      const n = r.mpint();
      bits = n.length === 0 ? 0 : (n.length - 1) * 8 + (32 - Math.clz32(n[0]!));
      if (bits < RSA_MIN_BITS)
        throw new SshKeyError(`RSA keys must have at least ${RSA_MIN_BITS} bits (this one has ${bits})`);
      if (bits > RSA_MAX_BITS) throw new SshKeyError(`RSA keys of more than ${RSA_MAX_BITS} bits are not accepted`);
      if (e.length === 0 || (e[e.length - 1]! & 1) === 0) throw new SshKeyError("the RSA key's exponent is invalid");
      mustImport({ kty: "RSA", n: b64url(n), e: b64url(e) }, "RSA");
      break;
    }
    case SK_ED25519:
      readEd25519(r, "security-key Ed25519");
      readApplication(r);
      break;
    case SK_ECDSA:
      readEcPoint(r, "nistp256", "security-key ECDSA");
      readApplication(r);
      break;
    default:
      return refuseType(type);
  }
  r.end();
  return bits === undefined ? { type } : { type, bits };
};

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/**
 * An `authorized_keys`-style line, `<type> <base64> [comment]`, of an accepted subject key type.
 * Throws `SshKeyError` on anything else: DSA, certificates, bad base64, a first token that names
 * another type than the blob, short RSA keys, keys that do not parse.
 */
export const parsePublicKeyLine = (line: string): ParsedPublicKeyLine => {
  const text = line.trim();
  if (text.length > MAX_LINE_LENGTH) throw new SshKeyError("the public key line is too long");
  if (/[\r\n]/.test(text)) throw new SshKeyError("give exactly one public key line");
  const match = /^(\S+)[ \t]+(\S+)(?:[ \t]+(.*))?$/.exec(text);
  if (!match) throw new SshKeyError('a public key line reads "<type> <base64> [comment]"');
  const [, token = "", encoded = "", comment = ""] = match;
  if (token === "ssh-dss" || token.includes("-cert-v0")) refuseType(token);
  if (encoded.length % 4 !== 0 || !BASE64.test(encoded)) throw new SshKeyError("the public key is not valid base64");
  const blob = Buffer.from(encoded, "base64");
  if (blob.toString("base64") !== encoded) throw new SshKeyError("the public key is not valid base64");
  const { type, bits } = parsePublicKeyBlob(blob);
  if (type !== token) {
    throw new SshKeyError(`the line says ${JSON.stringify(token.slice(0, 64))} but the key is ${type}`);
  }
  const parsed: ParsedPublicKeyLine = { type, blob, comment: comment.trim() };
  if (bits !== undefined) parsed.bits = bits;
  return parsed;
};

const PEM_BEGIN = "-----BEGIN OPENSSH PRIVATE KEY-----";
const PEM_END = "-----END OPENSSH PRIVATE KEY-----";
const AUTH_MAGIC = Buffer.from("openssh-key-v1\0", "latin1");
/** The block size the private section is padded to when it is not encrypted. */
const PLAIN_BLOCK = 8;

/** The key's own fields in the private section: type name, public fields, then the secrets. */
const privateFields = (key: KeyObject, w: SshWriter) => {
  const jwk = key.export({ format: "jwk" });
  switch (key.asymmetricKeyType) {
    case "ed25519": {
      const pub = jwkBytes(jwk.x, 32);
      w.string("ssh-ed25519")
        .string(pub)
        .string(Buffer.concat([jwkBytes(jwk.d, 32), pub]));
      return;
    }
    case "ec": {
      const curve = curveOfJwk(jwk.crv);
      const point = Buffer.concat([Buffer.from([4]), jwkBytes(jwk.x, curve.size), jwkBytes(jwk.y, curve.size)]);
      w.string(`ecdsa-sha2-${curve.id}`).string(curve.id).string(point).mpint(jwkBytes(jwk.d));
      return;
    }
    case "rsa":
      w.string("ssh-rsa").mpint(jwkBytes(jwk.n)).mpint(jwkBytes(jwk.e)).mpint(jwkBytes(jwk.d));
      w.mpint(jwkBytes(jwk.qi)).mpint(jwkBytes(jwk.p)).mpint(jwkBytes(jwk.q));
      return;
    default:
      throw new SshKeyError(`unsupported key type ${key.asymmetricKeyType ?? "(none)"}`);
  }
};

/**
 * The private key as an unencrypted `openssh-key-v1` file (what `ssh-keygen -N ""` writes): the magic,
 * cipher and KDF "none", one public blob, then the private section (a random check number twice, the
 * key's fields, the comment, and padding bytes 1, 2, 3… to a multiple of 8), base64 in PEM armour.
 */
export const opensshPrivateKey = (key: KeyObject, comment = ""): string => {
  if (key.type !== "private") throw new SshKeyError("a private key is needed");
  const check = randomBytes(4).readUInt32BE();
  const section = new SshWriter().uint32(check).uint32(check);
  privateFields(key, section);
  section.string(comment);
  let body = section.toBuffer();
  const padLength = (PLAIN_BLOCK - (body.length % PLAIN_BLOCK)) % PLAIN_BLOCK;
  body = Buffer.concat([body, Buffer.from(Array.from({ length: padLength }, (_, i) => i + 1))]);
  const file = new SshWriter()
    .raw(AUTH_MAGIC)
    .string("none")
    .string("none")
    .string("")
    .uint32(1)
    .string(publicBlobOf(key))
    .string(body)
    .toBuffer()
    .toString("base64");
  const lines = file.match(/.{1,70}/g) ?? [];
  return `${PEM_BEGIN}\n${lines.join("\n")}\n${PEM_END}\n`;
};
