import { randomBytes } from "node:crypto";
import { Readable, Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { describe, expect, it } from "vitest";
import {
  CHUNK_BYTES,
  chunkKey,
  createOpener,
  createSealer,
  createVerifyingTap,
  decodePrelude,
  encodePrelude,
  SealedStreamError,
} from "./sealed-stream";

const key = chunkKey(randomBytes(32), randomBytes(32));
const prelude = encodePrelude({ format: 1, note: "header" });

const collect = () => {
  const parts: Buffer[] = [];
  const sink = new Writable({
    write: (chunk: Buffer, _encoding, callback) => {
      parts.push(chunk);
      callback();
    },
  });
  return { sink, bytes: () => Buffer.concat(parts) };
};

const seal = async (plaintext: Buffer) => {
  const out = collect();
  await pipeline(Readable.from([plaintext]), createSealer(key, prelude), out.sink);
  return out.bytes();
};

/** Opens a whole sealed file (prelude included), as a restore reads it. */
const open = async (file: Buffer, withKey = key) => {
  const decoded = decodePrelude(file);
  if (!decoded) throw new SealedStreamError("truncated", "no prelude");
  const out = collect();
  await pipeline(
    Readable.from([file.subarray(decoded.prelude.length)]),
    createOpener(withKey, Buffer.from(decoded.prelude)),
    out.sink,
  );
  return out.bytes();
};

const kindOf = (promise: Promise<unknown>) =>
  promise.then(
    () => "opened",
    (error: unknown) => (error instanceof SealedStreamError ? error.kind : String(error)),
  );

describe("sealed streams", () => {
  const plaintext = randomBytes(CHUNK_BYTES * 2 + 123);

  it("open to what was sealed, across chunks and for an empty stream, and carry the header in clear", async () => {
    const file = await seal(plaintext);
    expect((await open(file)).equals(plaintext)).toBe(true);
    expect(decodePrelude(file)?.header).toEqual({ format: 1, note: "header" });
    expect((await open(await seal(Buffer.alloc(0)))).length).toBe(0);
  });

  it("refuse a cut, a changed byte anywhere, swapped chunks, bytes after the end and another key", async () => {
    const file = await seal(plaintext);
    const frame = 5 + CHUNK_BYTES + 16;
    const body = file.subarray(prelude.length);
    expect(await kindOf(open(file.subarray(0, file.length - 10)))).toBe("truncated");
    expect(await kindOf(open(file.subarray(0, prelude.length + frame)))).toBe("truncated");
    for (const at of [3, prelude.length - 2, prelude.length + 100, file.length - 1]) {
      const changed = Buffer.from(file);
      changed[at]! ^= 0x40;
      expect(await kindOf(open(changed)), `byte ${at}`).not.toBe("opened");
    }
    const swapped = Buffer.concat([
      prelude,
      body.subarray(frame, 2 * frame),
      body.subarray(0, frame),
      body.subarray(2 * frame),
    ]);
    expect(await kindOf(open(swapped))).toBe("damaged");
    expect(await kindOf(open(Buffer.concat([file, body.subarray(0, frame)])))).toBe("damaged");
    expect(await kindOf(open(file, chunkKey(randomBytes(32), randomBytes(32))))).toBe("damaged");
  });

  it("pass a whole file through the verifying tap unchanged, and refuse a cut one there", async () => {
    const file = await seal(plaintext);
    const out = collect();
    await pipeline(
      Readable.from([file.subarray(0, 7), file.subarray(7)]),
      createVerifyingTap(() => key),
      out.sink,
    );
    expect(out.bytes().equals(file)).toBe(true);
    const cut = pipeline(
      Readable.from([file.subarray(0, file.length - 1)]),
      createVerifyingTap(() => key),
      collect().sink,
    );
    expect(await kindOf(cut)).toBe("truncated");
  });
});
