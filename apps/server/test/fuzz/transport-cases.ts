import { gzipSync } from "node:zlib";
import { fillPath, type Operation } from "./operations";
import { plainRequest } from "./requests";
import type { RawRequest } from "./send";
import type { FuzzWorld } from "./world";

/** Path segments that are not valid percent-encoding, or decode to bytes that are not UTF-8. */
export const BAD_PATH_SEGMENTS = ["%", "%zz", "%C0%AF", "%FF%FE", "%ED%A0%80", "%E0%80", "a%2", "%%41"] as const;

/** Each parameter of the operation in turn replaced by each bad segment, the others left valid. */
export const badPathRequests = (operation: Operation, world: FuzzWorld): RawRequest[] => {
  const base = plainRequest(operation, world);
  const query = base.path.includes("?") ? base.path.slice(base.path.indexOf("?")) : "";
  const validPath = base.path.slice(0, base.path.length - query.length).split("/");
  const templateParts = operation.path.split("/");
  return operation.pathParamNames.flatMap((param) =>
    BAD_PATH_SEGMENTS.map((bad) => ({
      ...base,
      label: `${operation.name} with ${param}=${bad}`,
      path: fillPath(operation, (name) =>
        name === param ? bad : (validPath[templateParts.indexOf(`:${name}`)] ?? "x"),
      ),
    })),
  );
};

/** The JSON value with its n-th string (depth first) given a lone surrogate; undefined when it has fewer. */
const withLoneSurrogateAt = (value: unknown, n: number): unknown => {
  let seen = -1;
  const visit = (v: unknown): unknown => {
    if (typeof v === "string") return ++seen === n ? `${v.slice(0, 8)}\uDC00` : v;
    if (Array.isArray(v)) return v.map(visit);
    if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, visit(x)]));
    return v;
  };
  const result = visit(value);
  return seen >= n ? result : undefined;
};

const MAX_SURROGATE_FIELDS = 6;

/** Bodies whose bytes, encoding or size are wrong, or whose strings are not well-formed Unicode. */
export const badBodyRequests = (operation: Operation, world: FuzzWorld): RawRequest[] => {
  if (operation.method === "GET" || !operation.body) return [];
  const base = plainRequest(operation, world);
  const json = base.body ?? Buffer.from("{}");
  const variant = (label: string, headers: Record<string, string>, body: Buffer): RawRequest => ({
    ...base,
    label: `${operation.name}: ${label}`,
    headers: { ...base.headers, ...headers },
    body,
  });
  const gzipped = gzipSync(json);
  return [
    variant("gzip header on a plain body", { "content-encoding": "gzip" }, json),
    variant("deflate header on garbage", { "content-encoding": "deflate" }, Buffer.from([0xde, 0xad, 0xbe, 0xef])),
    variant("truncated gzip", { "content-encoding": "gzip" }, gzipped.subarray(0, Math.ceil(gzipped.length / 2))),
    variant("gzip that inflates past the limit", { "content-encoding": "gzip" }, gzipSync(Buffer.alloc(4 << 20, 32))),
    variant("unknown content-encoding", { "content-encoding": "br" }, json),
    variant("unsupported charset", { "content-type": "application/json; charset=utf-16" }, json),
    variant("body over the size limit", {}, Buffer.alloc((1 << 20) + 16, 32)),
    variant("malformed JSON", {}, Buffer.from('{"a":')),
    variant("invalid UTF-8 in JSON", {}, Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xc0, 0xaf, 0x22, 0x7d])),
    ...Array.from({ length: MAX_SURROGATE_FIELDS }, (_, n) => withLoneSurrogateAt(JSON.parse(json.toString("utf8")), n))
      .filter((body) => body !== undefined)
      .map((body, n) => variant(`lone surrogate in string ${n + 1}`, {}, Buffer.from(JSON.stringify(body)))),
  ];
};

/**
 * Authorization headers that are not one Bearer token: each must be refused. A 5,000-parameter query
 * and an oversized header must be answered with the JSON error body, like every other error.
 */
export const badHeaderRequests = (operation: Operation, world: FuzzWorld): RawRequest[] => {
  const base = plainRequest(operation, world);
  const token = world.actors[0]!.token;
  const query = Array.from({ length: 5_000 }, (_, i) => `p${i}=${i}`).join("&");
  const cases: RawRequest[] = [
    { ...base, label: `${operation.name}: 5,000 query parameters`, path: `${base.path.split("?")[0]}?${query}` },
    {
      ...base,
      label: `${operation.name}: 20 KiB header`,
      headers: { ...base.headers, "x-filler": "a".repeat(20_480) },
    },
  ];
  if (operation.isPublic) return cases;
  const refused = (label: string, authorization: string): RawRequest => ({
    ...base,
    label: `${operation.name}: ${label}`,
    headers: { ...base.headers, authorization },
    mustFail: true,
  });
  return [
    ...cases,
    refused("Digest scheme", `Digest ${token}`),
    refused("seven arbitrary characters as the scheme", `XXXXXXX${token}`),
    refused("Basic scheme", `Basic ${token}`),
    refused("Bearer with two tokens", `Bearer ${token} ${token}`),
    refused("Bearer without a token", "Bearer"),
    refused("an overlong token", `Bearer ${"a".repeat(4_096)}`),
  ];
};
