import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import { BadRequestError } from "../../errors";
import { isAddressAllowed, resolveOutboundTarget, type OutboundPolicy } from "../../lib/outbound";
import { scrubError } from "./credentials";

/**
 * The rules every connector keeps, whatever the kind of outside system:
 * - where: a host is resolved once, every address vetted against ALLOW_PRIVATE_OUTBOUND, and the
 *   client dials the vetted address only (a second DNS answer cannot redirect it);
 * - how long: connecting takes at most CONNECT_TIMEOUT_MS, one operation OPERATION_TIMEOUT_MS, and the
 *   whole use (name resolution included) ends within the caller's deadline, DEADLINE_MS unless told,
 *   with a ConnectorTimeoutError naming the system, after which the client is torn down;
 * - TLS: off, or on with the peer's certificate checked against the given CA (else the default
 *   trust) and the host's name, unless the owner chose `rejectUnauthorized: false`;
 * - secrets: the credentials of the call never appear in the error it throws.
 */

export const DEADLINE_MS = 10_000;
export const CONNECT_TIMEOUT_MS = 5_000;
export const OPERATION_TIMEOUT_MS = 5_000;

/** What a connector call needs from its caller. */
export type Reach = {
  /** How far the call may reach (env ALLOW_PRIVATE_OUTBOUND). */
  outbound: OutboundPolicy;
  /** The whole use's time limit; DEADLINE_MS when not given. */
  deadlineMs?: number;
  /** Secrets beyond the target's own password that an error might echo (a password being set). */
  secrets?: readonly (string | undefined)[];
};

/** TLS of a connection; `undefined` is a plain connection. */
export type Tls = { ca?: string; rejectUnauthorized: boolean } | undefined;

/** The TLS a dynamic secret's target gets: on, fully checked, when it names a CA. */
export const tlsOfCa = (ca: string | undefined): Tls => (ca ? { ca, rejectUnauthorized: true } : undefined);

/** Node's TLS options for a connection to `servername` (undefined when the host is an address). */
export const tlsOptions = (tls: Tls, servername: string | undefined) =>
  tls
    ? {
        rejectUnauthorized: tls.rejectUnauthorized,
        ...(tls.ca ? { ca: tls.ca } : {}),
        ...(servername ? { servername } : {}),
      }
    : undefined;

export class ConnectorTimeoutError extends Error {
  override name = "ConnectorTimeoutError";
}

/** Runs `work` and gives up after `ms`, calling `abort` so the connection does not linger. */
export const withDeadline = async <T>(ms: number, label: string, abort: () => void, work: Promise<T>): Promise<T> => {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => {
      abort();
      reject(new ConnectorTimeoutError(`${label} did not answer within ${ms} ms`));
    }, ms);
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
};

export type VettedHost = { address: string; servername: string | undefined };

/** A host of a host-and-port target, resolved once and vetted; the client dials `address`. */
export const vetHost = async (host: string, policy: OutboundPolicy): Promise<VettedHost> => {
  const bare = host.replace(/^\[(.*)\]$/, "$1");
  const addresses = isIP(bare)
    ? [{ address: bare }]
    : await lookup(bare, { all: true, verbatim: true }).catch(() => [] as { address: string }[]);
  if (addresses.length === 0) throw new BadRequestError(`Could not resolve host ${host}`);
  if (addresses.some((a) => !isAddressAllowed(a.address, policy))) throw new BadRequestError("Invalid db host");
  return { address: addresses[0]!.address, servername: isIP(bare) ? undefined : bare };
};

/** A URL target, its name resolved once and every address vetted (see lib/outbound). */
export const vetUrl = (url: string, schemes: readonly string[], policy: OutboundPolicy) =>
  resolveOutboundTarget(url, { schemes, policy });

/**
 * The one shape of a connector call: `open` makes the client (handing it to `keep` as soon as it
 * exists, so the deadline can tear it down mid-connect), `work` uses it, `close` always ends it.
 * The whole call keeps the deadline, and its error carries none of `secrets`.
 */
export const runConnected = async <C, T>(
  reach: Reach,
  call: {
    label: string;
    secrets: readonly (string | undefined)[];
    open: (keep: (client: C) => void) => Promise<C>;
    close: (client: C, abandoned: boolean) => Promise<void> | void;
  },
  work: (client: C) => Promise<T>,
): Promise<T> => {
  let client: C | undefined;
  let abandoned = false;
  const close = (target: C, dropped: boolean) =>
    Promise.resolve()
      .then(() => call.close(target, dropped))
      .catch(() => undefined);
  const keep = (created: C) => {
    client = created;
    if (abandoned) void close(created, true);
  };
  try {
    return await withDeadline(
      reach.deadlineMs ?? DEADLINE_MS,
      call.label,
      () => {
        abandoned = true;
        if (client !== undefined) void close(client, true);
      },
      call.open(keep).then(work),
    );
  } catch (error) {
    throw scrubError(error, [...call.secrets, ...(reach.secrets ?? [])]);
  } finally {
    if (client !== undefined && !abandoned) await close(client, false);
  }
};
