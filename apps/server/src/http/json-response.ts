import { createHash, type Hash } from "node:crypto";
import { Stream } from "node:stream";

type Conditional = { headers: Record<string, string | string[] | undefined> };
type HeaderSink = { setHeader: (name: string, value: string | number) => unknown };

/** A body encoded in pieces, with its strong ETag (digested piece by piece as they were encoded). */
export class EncodedJson {
  #etag: string | undefined;

  constructor(
    readonly chunks: readonly Buffer[],
    readonly length: number,
    etag?: string,
  ) {
    this.#etag = etag;
  }

  /** Digested on first use when the writer did not digest it already (a body that carries no tag never is). */
  get etag() {
    if (this.#etag === undefined) {
      const digest = createHash("sha256");
      for (const chunk of this.chunks) digest.update(chunk);
      this.#etag = tagOf(digest);
    }
    return this.#etag;
  }
}

const tagOf = (digest: Hash) => `"${digest.digest("base64url").slice(0, 32)}"`;

/** Pieces of about this many characters: large enough that a piece costs one write, small enough to reuse. */
const PIECE = 64 * 1024;

/**
 * A JSON body written as it is built (a 10,000-secret list): each value is stringified alone and the
 * text encoded into pieces of ~64 KB, so no whole-body string nor every value's object lives at once.
 * The caller writes the punctuation; `value` is JSON.stringify of one value.
 */
export class JsonWriter {
  readonly #chunks: Buffer[] = [];
  // Each piece is digested as it is encoded: a large list's ETag costs no pass of its own.
  readonly #digest = createHash("sha256");
  #pending = "";
  #length = 0;

  raw(text: string) {
    this.#pending += text;
    if (this.#pending.length >= PIECE) this.#flush();
    return this;
  }

  value(value: unknown) {
    return this.raw(JSON.stringify(value));
  }

  end(): EncodedJson {
    this.#flush();
    return new EncodedJson(this.#chunks, this.#length, tagOf(this.#digest));
  }

  #flush() {
    if (this.#pending === "") return;
    const piece = Buffer.from(this.#pending);
    this.#pending = "";
    this.#chunks.push(piece);
    this.#digest.update(piece);
    this.#length += piece.length;
  }
}

const encode = (body: unknown) => {
  if (body instanceof EncodedJson) return body;
  const json = Buffer.from(JSON.stringify(body));
  return new EncodedJson([json], json.length);
};

/**
 * The hot reads (secret list and get, privilege read, identity read) send their body serialized
 * once, as a stream, which ts-rest pipes without re-validating: zod-parsing a 160-secret list costs
 * more than reading it, and on a single-row read the parse is a fifth of the request's allocations.
 * Their DTO builders construct exactly the keys the contract declares (no spread rows), and the
 * tests parse these responses with the contract's schemas and require the result to equal the body.
 */
class SerializedJson extends Stream {
  constructor(private readonly json: EncodedJson) {
    super();
  }

  /** ts-rest pipes a stream body into the response: the pieces go out in one corked write. */
  override pipe<W extends NodeJS.WritableStream>(destination: W): W {
    const { chunks } = this.json;
    if (chunks.length === 1) destination.end(chunks[0]!);
    else {
      const corkable = destination as W & { cork?: () => void };
      corkable.cork?.();
      for (const chunk of chunks) destination.write(chunk);
      destination.end();
    }
    return destination;
  }
}

const serialized = <T>(res: HeaderSink, json: EncodedJson) => {
  res.setHeader("Content-Type", "application/json; charset=utf-8");
  res.setHeader("Content-Length", json.length);
  return { status: 200 as const, body: new SerializedJson(json) as unknown as T };
};

/** A body as an object, or already encoded by a JsonWriter. */
export const jsonOk = <T>(res: HeaderSink, body: T | EncodedJson) => serialized<T>(res, encode(body));

/** The strong ETag of an encoded body, quoted (the bench's list floor tags its body with it too). */
export const strongEtag = (json: Buffer | EncodedJson) =>
  Buffer.isBuffer(json) ? tagOf(createHash("sha256").update(json)) : json.etag;

/**
 * v4 reads carry a strong ETag of the body; a matching If-None-Match answers 304 with no body.
 * The body is computed (and every permission checked) either way: the tag only saves the transfer.
 */
export const jsonWithEtag = <T>(req: Conditional, res: HeaderSink, body: T | EncodedJson) => {
  const json = encode(body);
  const etag = strongEtag(json);
  res.setHeader("ETag", etag);
  const match = req.headers["if-none-match"];
  const tags = (Array.isArray(match) ? match.join(",") : (match ?? "")).split(",").map((t) => t.trim());
  if (tags.includes(etag) || tags.includes(`W/${etag}`) || tags.includes("*"))
    return { status: 304 as const, body: undefined };
  return serialized<T>(res, json);
};
