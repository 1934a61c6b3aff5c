import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import { BadRequestError } from "../../../errors";
import { isAddressAllowed, type OutboundPolicy } from "../../../lib/outbound";

export type ResolvedHost = { address: string; servername: string | undefined };

/**
 * A provider host is resolved once and every address vetted against ALLOW_PRIVATE_OUTBOUND; the
 * client then dials the vetted address, so a second DNS answer cannot redirect it.
 */
export const resolveProviderHost = async (host: string, policy: OutboundPolicy): Promise<ResolvedHost> => {
  const bare = host.replace(/^\[(.*)\]$/, "$1");
  const addresses = isIP(bare)
    ? [{ address: bare }]
    : await lookup(bare, { all: true, verbatim: true }).catch(() => [] as { address: string }[]);
  if (addresses.length === 0) throw new BadRequestError(`Could not resolve host ${host}`);
  if (addresses.some((a) => !isAddressAllowed(a.address, policy))) throw new BadRequestError("Invalid db host");
  return { address: addresses[0]!.address, servername: isIP(bare) ? undefined : bare };
};

/** Runs `work` and gives up after `ms`, calling `abort` so the connection does not linger. */
export const withDeadline = async <T>(ms: number, abort: () => void, work: Promise<T>): Promise<T> => {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => {
      abort();
      reject(new Error(`The provider did not answer within ${ms} ms`));
    }, ms);
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
};
