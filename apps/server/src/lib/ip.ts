import ipaddr from "ipaddr.js";
import type { TrustedIp } from "@keyward/contract";
import { BadRequestError } from "../errors";
import { createBoundedCache } from "./bounded-cache";

/** "1.2.3.4" -> {ipAddress, type}; "10.0.0.0/24" -> {ipAddress, type, prefix}; invalid -> 400. */
export const parseTrustedIp = (input: string): TrustedIp => {
  const value = input.trim();
  try {
    if (value.includes("/")) {
      const [address, prefix] = ipaddr.parseCIDR(value);
      return { ipAddress: address.toString(), type: address.kind(), prefix };
    }
    if (ipaddr.isValid(value)) {
      const address = ipaddr.parse(value);
      return { ipAddress: address.toString(), type: address.kind() };
    }
  } catch {
    // fall through to the error below
  }
  throw new BadRequestError("The IP is not a valid IPv4, IPv6, or CIDR block");
};

type ParsedIp = { text: string; address: ipaddr.IPv4 | ipaddr.IPv6 | undefined };
/** Clients repeat their address on every request; parse each one once (bounded). */
const parsedIps = createBoundedCache<ParsedIp>({ maxEntries: 10_000, recency: "write" });

const parseClientIp = (ip: string): ParsedIp => {
  let parsed = parsedIps.get(ip);
  if (!parsed) {
    let address = ipaddr.isValid(ip) ? ipaddr.parse(ip) : undefined;
    // The socket's IPv4-mapped IPv6 form (::ffff:1.2.3.4) is compared as plain IPv4.
    if (address?.kind() === "ipv6" && (address as ipaddr.IPv6).isIPv4MappedAddress()) {
      address = (address as ipaddr.IPv6).toIPv4Address();
    }
    parsed = { text: address ? address.toString() : ip, address };
    parsedIps.set(ip, parsed);
  }
  return parsed;
};

export const normalizeIp = (ip: string) => parseClientIp(ip).text;

/**
 * A trusted-IP list as stored (its JSON text), parsed once: the tokens of one auth method carry the
 * same list, and the same list object lets `isIpTrusted` reuse its parsed ranges (bounded).
 */
const trustedLists = createBoundedCache<readonly TrustedIp[]>({ maxEntries: 1_000, recency: "write" });

export const trustedIpListOf = (json: string): readonly TrustedIp[] => {
  let list = trustedLists.get(json);
  if (!list) {
    list = Object.freeze(JSON.parse(json) as TrustedIp[]);
    trustedLists.set(json, list);
  }
  return list;
};

type Range = { kind: "ipv4" | "ipv6"; address: ipaddr.IPv4 | ipaddr.IPv6; prefix: number };
/** Keyed by the list itself: a cached token keeps the same list object, so it is parsed once. */
const compiled = new WeakMap<readonly TrustedIp[], Range[]>();

const compile = (list: readonly TrustedIp[]): Range[] => {
  let ranges = compiled.get(list);
  if (!ranges) {
    ranges = list.map((entry) => ({
      kind: entry.type,
      address: ipaddr.parse(entry.ipAddress),
      prefix: entry.prefix ?? (entry.type === "ipv4" ? 32 : 128),
    }));
    compiled.set(list, ranges);
  }
  return ranges;
};

/** Whether the client address falls in any trusted range. */
export const isIpTrusted = (clientIp: string, list: readonly TrustedIp[]): boolean => {
  const { address } = parseClientIp(clientIp);
  if (!address) return false;
  return compile(list).some((range) => range.kind === address.kind() && address.match(range.address, range.prefix));
};
