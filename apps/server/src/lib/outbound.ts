import { lookup as dnsLookup } from "node:dns/promises";
import http from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
import ipaddr from "ipaddr.js";
import { BadRequestError } from "../errors";

/** How far user-supplied URLs may reach: env ALLOW_PRIVATE_OUTBOUND, parsed in env.ts. */
export type OutboundPolicy = "none" | "loopback" | "private";

/** A URL checked once: its name resolved, every address vetted, one address pinned for the connection. */
export type OutboundTarget = {
  url: URL;
  hostname: string;
  address: string;
  family: 4 | 6;
  port: number;
};

// Cloud metadata endpoints that are not link-local (link-local is refused anyway).
const METADATA_ADDRESSES = new Set(["100.100.100.200", "fd00:ec2::254", "192.0.0.192"]);
const ALWAYS_REFUSED = new Set([
  "unspecified",
  "broadcast",
  "multicast",
  "linkLocal",
  "reserved",
  "benchmarking",
  "amt",
  "as112",
  "as112v6",
  "orchid2",
  "discard",
  "rfc6145",
  "rfc6052",
  "6to4",
  "teredo",
]);
const PRIVATE_RANGES = new Set(["private", "uniqueLocal", "carrierGradeNat"]);

const DEFAULT_PORTS: Record<string, number> = { "http:": 80, "https:": 443, "ldap:": 389, "ldaps:": 636 };

/** Whether one resolved address may be dialled under the policy. */
export const isAddressAllowed = (address: string, policy: OutboundPolicy): boolean => {
  if (!ipaddr.isValid(address)) return false;
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === "ipv6" && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) {
    parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  }
  if (METADATA_ADDRESSES.has(parsed.toString())) return false;
  const range = parsed.range();
  if (ALWAYS_REFUSED.has(range)) return false;
  if (range === "loopback") return policy === "loopback" || policy === "private";
  if (PRIVATE_RANGES.has(range)) return policy === "private";
  return true;
};

const parseUrl = (raw: string) => {
  try {
    return new URL(raw);
  } catch {
    throw new BadRequestError("Invalid URL");
  }
};

/**
 * Check a user-supplied URL before connecting: allowed scheme, no credentials, the name resolved
 * once and every address vetted (a name with one bad address is refused). The caller connects to
 * `address` only, so a second DNS answer cannot redirect the connection.
 */
export const resolveOutboundTarget = async (
  raw: string,
  options: { schemes: readonly string[]; policy: OutboundPolicy },
): Promise<OutboundTarget> => {
  const url = parseUrl(raw);
  if (!options.schemes.includes(url.protocol)) {
    throw new BadRequestError(`URL scheme must be one of ${options.schemes.map((s) => s.replace(":", "")).join(", ")}`);
  }
  if (url.username || url.password) {
    throw new BadRequestError("URLs with user credentials (e.g., user:pass@) are not allowed");
  }
  const hostname = url.hostname.replace(/^\[(.*)\]$/, "$1");
  if (!hostname) throw new BadRequestError("Invalid URL");
  let addresses: { address: string; family: number }[];
  if (ipaddr.isValid(hostname)) {
    addresses = [{ address: hostname, family: hostname.includes(":") ? 6 : 4 }];
  } else {
    addresses = await dnsLookup(hostname, { all: true, verbatim: true }).catch(() => []);
    if (addresses.length === 0) throw new BadRequestError("Could not resolve hostname to any IP address");
  }
  if (addresses.some((a) => !isAddressAllowed(a.address, options.policy))) {
    throw new BadRequestError("Local IPs not allowed as URL");
  }
  const [first] = addresses as [{ address: string; family: number }];
  return {
    url,
    hostname,
    address: first.address,
    family: first.family === 6 ? 6 : 4,
    port: url.port ? Number(url.port) : (DEFAULT_PORTS[url.protocol] ?? 0),
  };
};

/** A lookup that always answers with the pinned address, in whichever form the caller asks. */
const pinnedLookup = (target: OutboundTarget): LookupFunction =>
  ((_hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options?.all) callback(null, [{ address: target.address, family: target.family }]);
    else callback(null, target.address, target.family);
  }) as unknown as LookupFunction;

export class OutboundRequestError extends Error {}

export type PinnedResponse = { status: number; body: string; headers: http.IncomingHttpHeaders };

/**
 * One HTTP request to a vetted target: pinned address, no redirects followed, bounded size and time.
 * `caCert` (PEM) replaces the default trust store for https when given. Any status is answered.
 */
export const requestPinned = (
  target: OutboundTarget,
  options: {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string;
    caCert?: string;
    /** Only for a target whose owner chose to skip verification (Kubernetes `verifyTlsCertificate: false`). */
    rejectUnauthorized?: boolean;
    timeoutMs?: number;
    maxBytes?: number;
    /** Ends the request (and its connection) when aborted. */
    signal?: AbortSignal;
  } = {},
): Promise<PinnedResponse> => {
  const timeoutMs = options.timeoutMs ?? 5_000;
  const maxBytes = options.maxBytes ?? 1_048_576;
  const client = target.url.protocol === "https:" ? https : http;
  const url = options.path === undefined ? target.url : new URL(options.path, target.url);
  return new Promise((resolve, reject) => {
    const req = client.request(
      url,
      {
        method: options.method ?? "GET",
        lookup: pinnedLookup(target),
        headers: options.headers,
        timeout: timeoutMs,
        ...(options.signal ? { signal: options.signal } : {}),
        ...(options.caCert && target.url.protocol === "https:" ? { ca: options.caCert } : {}),
        // The certificate is checked against the URL's host even when a forwarded Host header names another.
        ...(target.url.protocol === "https:"
          ? { servername: ipaddr.isValid(target.hostname) ? "" : target.hostname }
          : {}),
        ...(options.rejectUnauthorized === false ? { rejectUnauthorized: false } : {}),
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on("data", (chunk: Buffer) => {
          size += chunk.length;
          if (size > maxBytes) {
            req.destroy(new OutboundRequestError("Response is too large"));
            return;
          }
          chunks.push(chunk);
        });
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8"), headers: res.headers }),
        );
        res.on("error", reject);
      },
    );
    req.on("timeout", () => req.destroy(new OutboundRequestError(`Request timed out after ${timeoutMs} ms`)));
    req.on("error", reject);
    req.end(options.body);
  });
};

/** GET a body as text from a vetted target; anything but a 200 is an error. */
export const getTextPinned = async (
  target: OutboundTarget,
  options: { caCert?: string; timeoutMs?: number; maxBytes?: number; accept?: string; signal?: AbortSignal } = {},
): Promise<string> => {
  const { accept = "*/*", ...rest } = options;
  const { status, body } = await requestPinned(target, { ...rest, headers: { accept } });
  if (status !== 200) {
    throw new OutboundRequestError(
      status >= 300 && status < 400
        ? `Redirects are not followed (status ${status})`
        : `Request failed with status code ${status}`,
    );
  }
  return body;
};

/** GET a JSON document from a vetted target; anything but a 200 is an error. */
export const getJsonPinned = async (
  target: OutboundTarget,
  options: { caCert?: string; timeoutMs?: number; maxBytes?: number; signal?: AbortSignal } = {},
): Promise<unknown> => {
  const body = await getTextPinned(target, { ...options, accept: "application/json" });
  try {
    return JSON.parse(body);
  } catch {
    throw new OutboundRequestError("Response is not valid JSON");
  }
};

/** Host part of a URL for a pinned address (IPv6 needs brackets). */
export const urlHostOf = (target: OutboundTarget) => (target.family === 6 ? `[${target.address}]` : target.address);
