import { createCipheriv, createDecipheriv, createHash, hkdfSync } from "node:crypto";
import { Transform, type TransformCallback } from "node:stream";

/**
 * A stream sealed in AES-256-GCM chunks after a clear prelude (magic, a length, a JSON header):
 *
 *   prelude  MAGIC (8 bytes) | header length (u32 BE) | header JSON
 *   chunk    final flag (u8) | sealed length (u32 BE) | ciphertext | tag (16 bytes)
 *
 * Each chunk's nonce is its index (a counter; the key is one file's own, see `chunkKey`), and its
 * associated data is the prelude's SHA-256, the index and the final flag. So a changed byte anywhere
 * (the prelude included), chunks reordered, dropped or repeated, a file cut short (no final chunk) and
 * bytes after the final chunk are all refused.
 */
export const SEALED_MAGIC = Buffer.from("KWBACKUP", "latin1");
/** Plaintext bytes per chunk (the last one may hold fewer, or none). */
export const CHUNK_BYTES = 64 * 1024;
const TAG_BYTES = 16;
const FRAME_HEAD_BYTES = 5;
const PRELUDE_HEAD_BYTES = SEALED_MAGIC.length + 4;
const MAX_HEADER_BYTES = 1024 * 1024;

export class SealedStreamError extends Error {
  constructor(
    readonly kind: "not-sealed" | "damaged" | "truncated",
    message: string,
  ) {
    super(message);
  }
}

/** The prelude: magic, the header's length and the header as JSON. */
export const encodePrelude = (header: unknown): Buffer => {
  const json = Buffer.from(JSON.stringify(header), "utf8");
  const length = Buffer.alloc(4);
  length.writeUInt32BE(json.length);
  return Buffer.concat([SEALED_MAGIC, length, json]);
};

/**
 * The prelude at the start of `bytes`: its header (parsed JSON) and its length in bytes, or undefined
 * when `bytes` does not hold all of it yet. Throws when the bytes are not a sealed stream's.
 */
export const decodePrelude = (bytes: Buffer): { header: unknown; prelude: Buffer } | undefined => {
  const magic = bytes.subarray(0, Math.min(bytes.length, SEALED_MAGIC.length));
  if (!SEALED_MAGIC.subarray(0, magic.length).equals(magic)) throw new SealedStreamError("not-sealed", "no magic");
  if (bytes.length < PRELUDE_HEAD_BYTES) return undefined;
  const length = bytes.readUInt32BE(SEALED_MAGIC.length);
  if (length > MAX_HEADER_BYTES) throw new SealedStreamError("not-sealed", "header too long");
  if (bytes.length < PRELUDE_HEAD_BYTES + length) return undefined;
  const prelude = bytes.subarray(0, PRELUDE_HEAD_BYTES + length);
  try {
    return { header: JSON.parse(prelude.subarray(PRELUDE_HEAD_BYTES).toString("utf8")), prelude };
  } catch {
    throw new SealedStreamError("not-sealed", "header is not JSON");
  }
};

/** One file's chunk key: HKDF-SHA256 of a base key with the file's random salt, so counter nonces never repeat under a key. */
export const chunkKey = (baseKey: Buffer, salt: Buffer) =>
  Buffer.from(hkdfSync("sha256", baseKey, salt, "keyward:sealed-stream-chunks", 32));

const nonceOf = (index: number) => {
  const nonce = Buffer.alloc(12);
  nonce.writeBigUInt64BE(BigInt(index), 4);
  return nonce;
};

const aadOf = (digest: Buffer, index: number, final: boolean) => {
  const aad = Buffer.alloc(digest.length + 9);
  digest.copy(aad);
  aad.writeBigUInt64BE(BigInt(index), digest.length);
  aad[digest.length + 8] = final ? 1 : 0;
  return aad;
};

const digestOf = (prelude: Buffer) => createHash("sha256").update(prelude).digest();

const sealChunk = (key: Buffer, digest: Buffer, index: number, final: boolean, plaintext: Buffer) => {
  const cipher = createCipheriv("aes-256-gcm", key, nonceOf(index));
  cipher.setAAD(aadOf(digest, index, final));
  const body = Buffer.concat([cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
  const head = Buffer.alloc(FRAME_HEAD_BYTES);
  head[0] = final ? 1 : 0;
  head.writeUInt32BE(body.length, 1);
  return Buffer.concat([head, body]);
};

/** Seals what is written to it: the prelude first, then one frame per CHUNK_BYTES, the last flagged final. */
export const createSealer = (key: Buffer, prelude: Buffer): Transform => {
  const digest = digestOf(prelude);
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let index = 0;
  const take = (bytes: number) => {
    const all = Buffer.concat(pending);
    pending = [all.subarray(bytes)];
    pendingBytes = all.length - bytes;
    return all.subarray(0, bytes);
  };
  return new Transform({
    construct(callback) {
      this.push(prelude);
      callback();
    },
    transform(chunk: Buffer, _encoding, callback: TransformCallback) {
      pending.push(chunk);
      pendingBytes += chunk.length;
      // More than a chunk's worth: this one is not the last.
      while (pendingBytes > CHUNK_BYTES) this.push(sealChunk(key, digest, index++, false, take(CHUNK_BYTES)));
      callback();
    },
    flush(callback: TransformCallback) {
      callback(null, sealChunk(key, digest, index++, true, take(pendingBytes)));
    },
  });
};

/** Reads frames as they arrive and opens each; throws a SealedStreamError on the first that does not open. */
export class ChunkReader {
  readonly #key: Buffer;
  readonly #digest: Buffer;
  #buffered: Buffer = Buffer.alloc(0);
  #index = 0;
  #ended = false;

  constructor(key: Buffer, prelude: Buffer) {
    this.#key = key;
    this.#digest = digestOf(prelude);
  }

  /** The plaintexts of the chunks now complete. */
  push(bytes: Buffer): Buffer[] {
    this.#buffered = this.#buffered.length === 0 ? bytes : Buffer.concat([this.#buffered, bytes]);
    const opened: Buffer[] = [];
    while (this.#buffered.length > 0) {
      if (this.#ended) throw new SealedStreamError("damaged", "bytes after the last chunk");
      if (this.#buffered.length < FRAME_HEAD_BYTES) break;
      const flag = this.#buffered[0]!;
      const length = this.#buffered.readUInt32BE(1);
      if (flag > 1 || length < TAG_BYTES || length > CHUNK_BYTES + TAG_BYTES)
        throw new SealedStreamError("damaged", `chunk ${this.#index} has a malformed frame`);
      if (this.#buffered.length < FRAME_HEAD_BYTES + length) break;
      const body = this.#buffered.subarray(FRAME_HEAD_BYTES, FRAME_HEAD_BYTES + length);
      this.#buffered = this.#buffered.subarray(FRAME_HEAD_BYTES + length);
      opened.push(this.#open(body, flag === 1));
    }
    return opened;
  }

  /** Throws unless the final chunk was read and nothing is left over. */
  end() {
    if (!this.#ended || this.#buffered.length > 0)
      throw new SealedStreamError("truncated", "the stream ends before its last chunk");
  }

  #open(body: Buffer, final: boolean) {
    const decipher = createDecipheriv("aes-256-gcm", this.#key, nonceOf(this.#index));
    decipher.setAAD(aadOf(this.#digest, this.#index, final));
    decipher.setAuthTag(body.subarray(body.length - TAG_BYTES));
    try {
      const plaintext = Buffer.concat([decipher.update(body.subarray(0, body.length - TAG_BYTES)), decipher.final()]);
      this.#index += 1;
      this.#ended = final;
      return plaintext;
    } catch {
      throw new SealedStreamError("damaged", `chunk ${this.#index} does not authenticate`);
    }
  }
}

/** Opens the frames written to it (everything after the prelude) and passes on their plaintext. */
export const createOpener = (key: Buffer, prelude: Buffer): Transform => {
  const reader = new ChunkReader(key, prelude);
  return new Transform({
    transform(chunk: Buffer, _encoding, callback: TransformCallback) {
      try {
        for (const plaintext of reader.push(chunk)) if (plaintext.length > 0) this.push(plaintext);
        callback();
      } catch (error) {
        callback(error as Error);
      }
    },
    flush(callback: TransformCallback) {
      try {
        reader.end();
        callback();
      } catch (error) {
        callback(error as Error);
      }
    },
  });
};

/**
 * Passes a whole sealed stream (prelude included) through unchanged while authenticating every chunk:
 * `accept` sees the header and returns the chunk key (or throws to refuse the stream).
 */
export const createVerifyingTap = (
  accept: (header: unknown, prelude: Buffer) => Buffer | Promise<Buffer>,
): Transform => {
  let head: Buffer | undefined = Buffer.alloc(0);
  let reader: ChunkReader | undefined;
  return new Transform({
    transform(chunk: Buffer, _encoding, callback: TransformCallback) {
      try {
        if (reader) {
          reader.push(chunk);
          return callback(null, chunk);
        }
        head = Buffer.concat([head!, chunk]);
        const decoded = decodePrelude(head);
        if (!decoded) return callback(null, chunk);
        // The key may take a moment (a seal to open): the next chunk waits for this callback.
        Promise.resolve(accept(decoded.header, Buffer.from(decoded.prelude))).then(
          (key) => {
            try {
              reader = new ChunkReader(key, decoded.prelude);
              reader.push(head!.subarray(decoded.prelude.length));
              head = undefined;
              callback(null, chunk);
            } catch (error) {
              callback(error as Error);
            }
          },
          (error: unknown) => callback(error as Error),
        );
      } catch (error) {
        callback(error as Error);
      }
    },
    flush(callback: TransformCallback) {
      try {
        if (!reader) throw new SealedStreamError("truncated", "the stream ends inside its header");
        reader.end();
        callback();
      } catch (error) {
        callback(error as Error);
      }
    },
  });
};
