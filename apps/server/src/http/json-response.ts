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

  /** With a sink, each piece goes to it as it is encoded and nothing is kept (a streamed body: see StreamedJson). */
  constructor(private readonly sink?: (piece: Buffer) => void) {}

  raw(text: string) {
    this.#pending += text;
    if (this.#pending.length >= PIECE) this.flush();
    return this;
  }

  value(value: unknown) {
    return this.raw(JSON.stringify(value));
  }

  end(): EncodedJson {
    this.flush();
    return new EncodedJson(this.#chunks, this.#length, tagOf(this.#digest));
  }

  /** Encodes what is pending now (a streamed body's last piece). */
  flush() {
    if (this.#pending === "") return;
    const piece = Buffer.from(this.#pending);
    this.#pending = "";
    if (this.sink) return this.sink(piece);
    this.#chunks.push(piece);
    this.#digest.update(piece);
    this.#length += piece.length;
  }
}

type Destination = NodeJS.WritableStream & {
  destroyed?: boolean;
  destroy?: (error?: Error) => unknown;
  writableLength?: number;
};

/** What `destination` holds not yet taken by the client (a response's own buffer and its socket's). */
const writableLength = (destination: Destination) => destination.writableLength ?? 0;

/** Resolves once `destination` may take more, or is gone. */
const drained = (destination: Destination) =>
  new Promise<void>((resolve) => {
    const done = () => {
      destination.off("drain", done);
      destination.off("close", done);
      resolve();
    };
    destination.on("drain", done);
    destination.on("close", done);
  });

/** What a streamed body's producer writes through: pieces, and a pause while the client catches up. */
export type StreamSink = {
  out: JsonWriter;
  /**
   * A promise while the client has not taken what was written (backpressure), nothing otherwise;
   * throws ClientGone once the client has closed the connection.
   */
  keepUp: () => Promise<void> | undefined;
};

/** The client closed the connection while a streamed body was being written. */
export class ClientGone extends Error {
  constructor() {
    super("the client closed the connection");
  }
}

/** How long a client may keep a streamed body waiting before the work's turn passes on (see StreamedJson). */
export const SLOW_CLIENT_MS = 100;

type StreamHooks = {
  /**
   * Gives back the turn this work holds: as soon as the client keeps it waiting longer than
   * SLOW_CLIENT_MS (a slow reader then goes on at its own pace without holding up the next list, its
   * writes paced by its reading), and again when the body is written, cut, or not sent (a 304). It may
   * therefore be called more than once and must be idempotent, as the work gate's release is.
   */
  release: () => void;
  /** The body was cut by a failure of ours (not by the client leaving). */
  failed: (error: unknown) => void;
  now?: () => number;
  /** How much may wait in the connection's buffer before the producer waits for the client (1 MiB). */
  bufferBytes?: number;
};

/**
 * A body written to the client as it is produced, never whole in memory (the 10,000-secret list): its
 * ETag is decided before the first byte from what the body is built from, not from the body's text,
 * and it goes out without Content-Length (chunked). A failure after the first byte can only cut the
 * response, so the producer does everything that can refuse (permissions, expansions) before.
 */
export class StreamedJson {
  constructor(
    readonly etag: string,
    private readonly produce: (sink: StreamSink) => Promise<void>,
    private readonly hooks: StreamHooks,
  ) {}

  /** Not sent (a 304): the turn is given back. */
  cancel() {
    this.hooks.release();
  }

  async writeTo(destination: Destination) {
    const now = this.hooks.now ?? Date.now;
    const bufferBytes = this.hooks.bufferBytes ?? 1024 * 1024;
    let blocked = false;
    // Pieces queue in the connection's buffer up to bufferBytes: waiting on every piece would cost a
    // round of the event loop and a system call per 64 KB.
    const out = new JsonWriter((piece) => {
      destination.write(piece);
      if (writableLength(destination) >= bufferBytes) blocked = true;
    });
    const keepUp = () => {
      if (destination.destroyed) throw new ClientGone();
      if (!blocked) return undefined;
      blocked = false;
      const since = now();
      return drained(destination).then(() => {
        if (now() - since > SLOW_CLIENT_MS) this.hooks.release();
      });
    };
    try {
      await this.produce({ out, keepUp });
      out.flush();
      destination.end();
    } catch (error) {
      // Cut: the client sees a response that ends early, never one that looks whole.
      destination.destroy?.();
      if (!(error instanceof ClientGone)) this.hooks.failed(error);
    } finally {
      this.hooks.release();
    }
  }
}

class StreamedBody extends Stream {
  constructor(private readonly json: StreamedJson) {
    super();
  }

  override pipe<W extends NodeJS.WritableStream>(destination: W): W {
    void this.json.writeTo(destination);
    return destination;
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
export const jsonWithEtag = <T>(req: Conditional, res: HeaderSink, body: T | EncodedJson | StreamedJson) => {
  const json = body instanceof StreamedJson ? body : encode(body);
  const etag = json instanceof StreamedJson ? json.etag : strongEtag(json);
  res.setHeader("ETag", etag);
  const match = req.headers["if-none-match"];
  const tags = (Array.isArray(match) ? match.join(",") : (match ?? "")).split(",").map((t) => t.trim());
  if (tags.includes(etag) || tags.includes(`W/${etag}`) || tags.includes("*")) {
    if (json instanceof StreamedJson) json.cancel();
    return { status: 304 as const, body: undefined };
  }
  if (!(json instanceof StreamedJson)) return serialized<T>(res, json);
  res.setHeader("Content-Type", "application/json; charset=utf-8");
  return { status: 200 as const, body: new StreamedBody(json) as unknown as T };
};

/** A streamed body's tag: the digest of what it is built from (see StreamedJson). */
export const digestTag = (digest: Hash) => tagOf(digest);
