import { hash } from "node:crypto";
import { Stream } from "node:stream";

type Conditional = { headers: Record<string, string | string[] | undefined> };
type HeaderSink = { setHeader: (name: string, value: string | number) => unknown };

/**
 * The hot reads (secret list and get, privilege read, identity read) send their body serialized
 * once, as a stream, which ts-rest pipes without re-validating: zod-parsing a 160-secret list costs
 * more than reading it, and on a single-row read the parse is a fifth of the request's allocations.
 * Their DTO builders construct exactly the keys the contract declares (no spread rows), and the
 * tests parse these responses with the contract's schemas and require the result to equal the body.
 */
class SerializedJson extends Stream {
  constructor(private readonly json: string | Buffer) {
    super();
  }

  /** ts-rest pipes a stream body into the response: write it in one piece, as `res.json` would. */
  override pipe<W extends NodeJS.WritableStream>(destination: W): W {
    destination.end(this.json);
    return destination;
  }
}

const serialized = <T>(res: HeaderSink, json: string | Buffer) => {
  res.setHeader("Content-Type", "application/json; charset=utf-8");
  res.setHeader("Content-Length", typeof json === "string" ? Buffer.byteLength(json) : json.length);
  return { status: 200 as const, body: new SerializedJson(json) as unknown as T };
};

export const jsonOk = <T>(res: HeaderSink, body: T) => serialized<T>(res, JSON.stringify(body));

/**
 * v4 reads carry a strong ETag of the body; a matching If-None-Match answers 304 with no body.
 * The body is computed (and every permission checked) either way: the tag only saves the transfer.
 */
/** The strong ETag of an encoded body, quoted (the bench's list floor tags its body with it too). */
export const strongEtag = (json: Buffer) => `"${hash("sha256", json, "base64url").slice(0, 32)}"`;

export const jsonWithEtag = <T>(req: Conditional, res: HeaderSink, body: T) => {
  // Encoded once: the tag and the response share the bytes (a list is ~75 KB).
  const json = Buffer.from(JSON.stringify(body));
  const etag = strongEtag(json);
  res.setHeader("ETag", etag);
  const match = req.headers["if-none-match"];
  const tags = (Array.isArray(match) ? match.join(",") : (match ?? "")).split(",").map((t) => t.trim());
  if (tags.includes(etag) || tags.includes(`W/${etag}`) || tags.includes("*"))
    return { status: 304 as const, body: undefined };
  return serialized<T>(res, json);
};
