import ipaddr from "ipaddr.js";
import { Client, FilterParser, type Entry } from "ldapts";
import { resolveOutboundTarget, urlHostOf, type OutboundPolicy, type OutboundTarget } from "../../../lib/outbound";

/** Talking to a configured directory: every connection goes to the address vetted by outbound.ts. */
export type LdapServer = { url: string; bindDN: string; bindPass: string; caCert?: string };
export type LdapSearch = LdapServer & { searchBase: string; searchFilter: string };

export const LDAP_SCHEMES = ["ldap:", "ldaps:"] as const;

export const isValidLdapFilter = (filter: string) => {
  try {
    FilterParser.parseString(filter);
    return true;
  } catch {
    return false;
  }
};

/** RFC 4515 escaping, so a username can never change the shape of the search filter. */
export const escapeFilterValue = (value: string) =>
  value.replace(/[\\*()\0]/g, (c) => `\\${c.charCodeAt(0).toString(16).padStart(2, "0")}`);

export const resolveLdapTarget = (url: string, policy: OutboundPolicy) =>
  resolveOutboundTarget(url, { schemes: LDAP_SCHEMES, policy });

const clientFor = (target: OutboundTarget, caCert?: string) => {
  const secure = target.url.protocol === "ldaps:";
  return new Client({
    url: `${target.url.protocol}//${urlHostOf(target)}:${target.port}`,
    connectTimeout: 5_000,
    timeout: 10_000,
    ...(secure
      ? {
          tlsOptions: {
            servername: ipaddr.isValid(target.hostname) ? undefined : target.hostname,
            ...(caCert ? { ca: [caCert] } : {}),
          },
        }
      : {}),
  });
};

const withClient = async <T>(
  target: OutboundTarget,
  caCert: string | undefined,
  run: (client: Client) => Promise<T>,
) => {
  const client = clientFor(target, caCert);
  try {
    return await run(client);
  } finally {
    await client.unbind().catch(() => undefined);
  }
};

/** Whether the service account can bind (checked when a configuration is written). */
export const canBind = async (server: LdapServer, policy: OutboundPolicy) => {
  const target = await resolveLdapTarget(server.url, policy);
  try {
    await withClient(target, server.caCert, (client) => client.bind(server.bindDN, server.bindPass));
    return true;
  } catch {
    return false;
  }
};

export type LdapUser = Record<string, string[]>;

const attributesOf = (entry: Entry): LdapUser => {
  const user: LdapUser = {};
  for (const [key, value] of Object.entries(entry)) {
    if (key === "dn") continue;
    const values = Array.isArray(value) ? value : [value];
    user[key] = values.map((v) => (Buffer.isBuffer(v) ? v.toString("utf8") : String(v)));
  }
  return user;
};

/**
 * Find the user with the service account, then bind as the user with the given password.
 * Answers the user's attributes, or null when the username or password is wrong. Connection
 * problems throw: they are not the caller's failure.
 */
export const authenticateLdapUser = async (
  target: OutboundTarget,
  config: LdapSearch,
  username: string,
  password: string,
): Promise<LdapUser | null> => {
  // A replacer function: a replacement string would expand `$&`, `$'` and `` $` `` from the username.
  const escaped = escapeFilterValue(username);
  const filter = config.searchFilter.replaceAll("{{username}}", () => escaped);
  const entries = await withClient(target, config.caCert, async (client) => {
    await client.bind(config.bindDN, config.bindPass);
    try {
      return (await client.search(config.searchBase, { scope: "sub", filter, sizeLimit: 2 })).searchEntries;
    } catch (error) {
      if (
        (error as { name?: string }).name === "NoSuchObjectError" ||
        (error as { name?: string }).name === "SizeLimitExceededError"
      )
        return [];
      throw error;
    }
  });
  if (entries.length !== 1) return null;
  const [entry] = entries as [Entry];
  try {
    await withClient(target, config.caCert, (client) => client.bind(entry.dn, password));
  } catch (error) {
    if ((error as { name?: string }).name === "InvalidCredentialsError") return null;
    throw error;
  }
  return attributesOf(entry);
};
