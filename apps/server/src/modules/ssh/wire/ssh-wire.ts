/**
 * The SSH binary encoding: big-endian fixed-size integers, length-prefixed byte strings and
 * multiple-precision integers. A `string` is a uint32 length then that many bytes; an `mpint` is a
 * string holding a two's-complement big-endian number with no needless leading byte (zero is the
 * empty string, and a positive number whose top bit is set gets one 0x00 in front).
 */

/** A key, line or blob that does not parse or that the rules refuse; callers answer it with a 400. */
export class SshKeyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SshKeyError";
  }
}

const UINT32_MAX = 0xffff_ffff;
const UINT64_MAX = (1n << 64n) - 1n;

/** The magnitude of a non-negative number as an mpint's contents (without the length prefix). */
export const mpintBody = (magnitude: Buffer): Buffer => {
  let start = 0;
  while (start < magnitude.length && magnitude[start] === 0) start++;
  const trimmed = magnitude.subarray(start);
  if (trimmed.length === 0) return Buffer.alloc(0);
  return (trimmed[0]! & 0x80) !== 0 ? Buffer.concat([Buffer.from([0]), trimmed]) : Buffer.from(trimmed);
};

/** Big-endian bytes of a non-negative bigint (no sign byte; zero is empty). */
export const bigintToBytes = (value: bigint): Buffer => {
  if (value < 0n) throw new RangeError("negative numbers are not encoded here");
  if (value === 0n) return Buffer.alloc(0);
  let hex = value.toString(16);
  if (hex.length % 2 === 1) hex = `0${hex}`;
  return Buffer.from(hex, "hex");
};

export const bytesToBigint = (bytes: Buffer): bigint =>
  bytes.length === 0 ? 0n : BigInt(`0x${bytes.toString("hex")}`);

/** Accumulates SSH fields; `toBuffer()` joins them. Methods chain. */
export class SshWriter {
  private readonly parts: Buffer[] = [];

  byte(value: number): this {
    if (!Number.isInteger(value) || value < 0 || value > 0xff) throw new RangeError(`not a byte: ${value}`);
    this.parts.push(Buffer.from([value]));
    return this;
  }

  uint32(value: number): this {
    if (!Number.isInteger(value) || value < 0 || value > UINT32_MAX) throw new RangeError(`not a uint32: ${value}`);
    const b = Buffer.alloc(4);
    b.writeUInt32BE(value);
    this.parts.push(b);
    return this;
  }

  uint64(value: bigint): this {
    if (value < 0n || value > UINT64_MAX) throw new RangeError(`not a uint64: ${value}`);
    const b = Buffer.alloc(8);
    b.writeBigUInt64BE(value);
    this.parts.push(b);
    return this;
  }

  /** A length-prefixed string: text is encoded as UTF-8. */
  string(value: Buffer | string): this {
    const body = typeof value === "string" ? Buffer.from(value, "utf8") : value;
    this.uint32(body.length);
    this.parts.push(body);
    return this;
  }

  /** A non-negative mpint, from a bigint or from unsigned big-endian bytes. */
  mpint(value: bigint | Buffer): this {
    return this.string(mpintBody(typeof value === "bigint" ? bigintToBytes(value) : value));
  }

  /** Bytes appended as they are, with no length prefix. */
  raw(value: Buffer): this {
    this.parts.push(value);
    return this;
  }

  toBuffer(): Buffer {
    return Buffer.concat(this.parts);
  }
}

/** Reads SSH fields in order; any read past the end throws `SshKeyError`. */
export class SshReader {
  private offset = 0;

  constructor(
    private readonly data: Buffer,
    private readonly what = "SSH data",
  ) {}

  private take(length: number): Buffer {
    if (length > this.data.length - this.offset) throw new SshKeyError(`${this.what} is truncated`);
    const out = this.data.subarray(this.offset, this.offset + length);
    this.offset += length;
    return out;
  }

  get remaining(): number {
    return this.data.length - this.offset;
  }

  /** Everything read so far: what a signature covers when the reader stops just before it. */
  consumed(): Buffer {
    return this.data.subarray(0, this.offset);
  }

  byte(): number {
    return this.take(1)[0]!;
  }

  uint32(): number {
    return this.take(4).readUInt32BE();
  }

  uint64(): bigint {
    return this.take(8).readBigUInt64BE();
  }

  string(): Buffer {
    return this.take(this.uint32());
  }

  /** A string that must be printable ASCII (key type names, curve names). */
  name(): string {
    const bytes = this.string();
    if (!bytes.every((c) => c >= 0x21 && c <= 0x7e)) throw new SshKeyError(`${this.what} holds an invalid name`);
    return bytes.toString("latin1");
  }

  text(): string {
    return this.string().toString("utf8");
  }

  /** A non-negative mpint in its minimal form, as unsigned big-endian bytes (no sign byte). */
  mpint(): Buffer {
    const body = this.string();
    if (body.length > 0 && (body[0]! & 0x80) !== 0) throw new SshKeyError(`${this.what} holds a negative number`);
    if (body.length > 1 && body[0] === 0 && (body[1]! & 0x80) === 0) {
      throw new SshKeyError(`${this.what} holds a number with a needless leading zero`);
    }
    return body[0] === 0 ? body.subarray(1) : body;
  }

  /** Throws unless every byte was read. */
  end(): void {
    if (this.remaining !== 0) throw new SshKeyError(`${this.what} has trailing bytes`);
  }
}
