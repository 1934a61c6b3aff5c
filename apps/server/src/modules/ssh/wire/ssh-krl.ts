import { SshReader, SshWriter } from "./ssh-wire";

/**
 * OpenSSH key revocation lists. A KRL is a header — the 8-byte magic "SSHKRL\n\0", uint32 format
 * version 1, uint64 KRL version, uint64 generation time (seconds), uint64 flags (0), string(reserved),
 * string(comment) — then sections, each byte(type) + string(data). The certificate section (type 1)
 * holds string(CA public blob), string(reserved), then sub-sections, each byte(type) + string(data);
 * the serial-list sub-section (0x20) is uint64 serials, ascending. No signature section is written:
 * recent OpenSSH refuses signed KRLs, and the file's integrity comes from the channel that carries it.
 */

const KRL_MAGIC = 0x5353484b524c0a00n;
const KRL_FORMAT_VERSION = 1;
const SECTION_CERTIFICATES = 1;
const CERT_SERIAL_LIST = 0x20;
const UINT64_MAX = (1n << 64n) - 1n;

export type BuildKrlInput = {
  caPublicBlob: Buffer;
  /** Revoked serials, in any order; repeats are dropped. Zero is refused (OpenSSH cannot revoke it). */
  serials: bigint[];
  /** Must grow with every change of the list. */
  krlVersion: bigint;
  generatedAt: Date;
  comment: string;
};

/** A KRL revoking `serials` of the CA's certificates; with no serials, a valid KRL that revokes nothing. */
export const buildKrl = (input: BuildKrlInput): Buffer => {
  const { caPublicBlob, serials, krlVersion, generatedAt, comment } = input;
  if (caPublicBlob.length === 0) throw new Error("a KRL section needs the CA public key blob");
  for (const s of serials) {
    if (s <= 0n || s > UINT64_MAX) throw new RangeError(`serial ${s} cannot be revoked by a KRL`);
  }
  const generatedMs = generatedAt.getTime();
  if (!Number.isFinite(generatedMs) || generatedMs < 0) throw new RangeError("generatedAt is not a valid time");

  const krl = new SshWriter()
    .uint64(KRL_MAGIC)
    .uint32(KRL_FORMAT_VERSION)
    .uint64(krlVersion)
    .uint64(BigInt(Math.floor(generatedMs / 1000)))
    .uint64(0n)
    .string("")
    .string(comment);
  if (serials.length > 0) {
    const unique = [...new Set(serials)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const list = new SshWriter();
    for (const s of unique) list.uint64(s);
    const section = new SshWriter()
      .string(caPublicBlob)
      .string("")
      .byte(CERT_SERIAL_LIST)
      .string(list.toBuffer())
      .toBuffer();
    krl.byte(SECTION_CERTIFICATES).string(section);
  }
  return krl.toBuffer();
};

/**
 * Whether `data` is a whole KRL: the magic, format version 1, a complete header and complete sections.
 * A fetcher checks this before replacing its file: sshd reads a file without the magic as a list of
 * plain keys (garbage locks everyone out), and a truncated KRL fails to parse.
 */
export const isKrl = (data: Buffer): boolean => {
  try {
    const r = new SshReader(data, "the KRL");
    if (r.uint64() !== KRL_MAGIC || r.uint32() !== KRL_FORMAT_VERSION) return false;
    r.uint64();
    r.uint64();
    r.uint64();
    r.string();
    r.string();
    while (r.remaining > 0) {
      r.byte();
      r.string();
    }
    return true;
  } catch {
    return false;
  }
};
