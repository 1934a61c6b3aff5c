import { getJsonPinned, requestPinned, type OutboundTarget, type PinnedResponse } from "../../lib/outbound";
import { OPERATION_TIMEOUT_MS, runConnected, vetUrl, type Reach } from "./rules";

export const HTTP_SCHEMES = ["https:", "http:"] as const;

/** An HTTP(S) service: its base URL, and the CA (PEM) its certificate is checked against, if not the default trust. */
export type HttpTarget = { url: string; ca?: string; schemes?: readonly string[] };

export type HttpCall = (request: {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  body?: string;
  maxBytes?: number;
}) => Promise<PinnedResponse>;

const originOf = (url: string) => {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
};

type Vetted = { target: OutboundTarget; signal: AbortSignal; abort: () => void };

/** The vetted target and a signal that ends its requests when the call is given up. */
const onVetted = <T>(reach: Reach, target: HttpTarget, work: (vetted: Vetted) => Promise<T>) =>
  runConnected<Vetted, T>(
    reach,
    {
      label: originOf(target.url),
      secrets: [],
      open: async (keep) => {
        const controller = new AbortController();
        const vetted = {
          target: await vetUrl(target.url, target.schemes ?? HTTP_SCHEMES, reach.outbound),
          signal: controller.signal,
          abort: () => controller.abort(),
        };
        keep(vetted);
        return vetted;
      },
      close: (vetted, abandoned) => {
        if (abandoned) vetted.abort();
      },
    },
    work,
  );

/**
 * Calls to one HTTP service: its name resolved and vetted once, every request to that address
 * (no redirects followed, bounded answers, an idle socket given up after OPERATION_TIMEOUT_MS), and
 * the whole use within the deadline. Any status is answered.
 */
export const withHttp = <T>(reach: Reach, target: HttpTarget, work: (call: HttpCall) => Promise<T>) =>
  onVetted(reach, target, ({ target: vetted, signal }) =>
    work((request) =>
      requestPinned(vetted, { ...request, caCert: target.ca, timeoutMs: OPERATION_TIMEOUT_MS, signal }),
    ),
  );

/** GET a JSON document; anything but a 200 with JSON is an error. */
export const getJson = (reach: Reach, target: HttpTarget, options: { maxBytes?: number } = {}) =>
  onVetted(reach, target, ({ target: vetted, signal }) =>
    getJsonPinned(vetted, { caCert: target.ca, timeoutMs: OPERATION_TIMEOUT_MS, maxBytes: options.maxBytes, signal }),
  );
