import { isIP } from "node:net";
import { Client } from "ldapts";
import { urlHostOf } from "../../lib/outbound";
import { CONNECT_TIMEOUT_MS, OPERATION_TIMEOUT_MS, runConnected, tlsOptions, vetUrl, type Reach } from "./rules";

export const LDAP_SCHEMES = ["ldap:", "ldaps:"] as const;

/**
 * A directory (`ldap://` or `ldaps://`, TLS by the scheme) and, optionally, who to bind as first.
 * An ldaps certificate is checked against `ca` (else the default trust) and the URL's host name,
 * unless `rejectUnauthorized` is false.
 */
export type LdapTarget = {
  url: string;
  bind?: { dn: string; password: string };
  ca?: string;
  rejectUnauthorized?: boolean;
};

const hostOf = (url: string) => {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
};

/** One connection per call to the vetted address, bound when asked, always unbound afterwards. */
export const withLdap = <T>(reach: Reach, target: LdapTarget, work: (client: Client) => Promise<T>) =>
  runConnected<Client, T>(
    reach,
    {
      label: `LDAP at ${hostOf(target.url)}`,
      secrets: [target.bind?.password],
      open: async (keep) => {
        const vetted = await vetUrl(target.url, LDAP_SCHEMES, reach.outbound);
        const secure = vetted.url.protocol === "ldaps:";
        const servername = isIP(vetted.hostname) ? undefined : vetted.hostname;
        const client = new Client({
          url: `${vetted.url.protocol}//${urlHostOf(vetted)}:${vetted.port}`,
          connectTimeout: CONNECT_TIMEOUT_MS,
          timeout: OPERATION_TIMEOUT_MS,
          ...(secure
            ? {
                tlsOptions: tlsOptions(
                  { ca: target.ca, rejectUnauthorized: target.rejectUnauthorized ?? true },
                  servername,
                ),
              }
            : {}),
        });
        keep(client);
        if (target.bind) await client.bind(target.bind.dn, target.bind.password);
        return client;
      },
      close: (client) => client.unbind(),
    },
    work,
  );
