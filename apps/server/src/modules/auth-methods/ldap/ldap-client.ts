import { FilterParser, type Client, type Entry } from "ldapts";
import type { OutboundPolicy } from "../../../lib/outbound";
import { LDAP_SCHEMES, withLdap } from "../../connectors/ldap";
import { vetUrl } from "../../connectors/rules";

/** Talking to a configured directory: every connection is a connectors call (outbound rule, deadline, TLS). */
export type LdapServer = { url: string; bindDN: string; bindPass: string; caCert?: string };
export type LdapSearch = LdapServer & { searchBase: string; searchFilter: string };

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

/** Refuses (400) a directory URL the outbound rule does not allow. */
export const assertLdapUrlAllowed = async (url: string, policy: OutboundPolicy) => {
  await vetUrl(url, LDAP_SCHEMES, policy);
};

const withServiceAccount = <T>(server: LdapServer, policy: OutboundPolicy, work: (client: Client) => Promise<T>) =>
  withLdap(
    { outbound: policy },
    { url: server.url, bind: { dn: server.bindDN, password: server.bindPass }, ca: server.caCert },
    work,
  );

/** Whether the service account can bind (checked when a configuration is written); a refused URL is a 400. */
export const canBind = async (server: LdapServer, policy: OutboundPolicy) => {
  await assertLdapUrlAllowed(server.url, policy);
  try {
    await withServiceAccount(server, policy, async () => undefined);
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

const NOT_FOUND = ["NoSuchObjectError", "SizeLimitExceededError"];

/**
 * Find the user with the service account, then bind as the user with the given password on the
 * same connection. Answers the user's attributes, or null when the username or password is wrong.
 * Connection problems throw: they are not the caller's failure.
 */
export const authenticateLdapUser = (
  config: LdapSearch,
  policy: OutboundPolicy,
  username: string,
  password: string,
): Promise<LdapUser | null> => {
  // A replacer function: a replacement string would expand `$&`, `$'` and `` $` `` from the username.
  const escaped = escapeFilterValue(username);
  const filter = config.searchFilter.replaceAll("{{username}}", () => escaped);
  return withServiceAccount(config, policy, async (client) => {
    let entries: Entry[];
    try {
      entries = (await client.search(config.searchBase, { scope: "sub", filter, sizeLimit: 2 })).searchEntries;
    } catch (error) {
      if (NOT_FOUND.includes((error as { name?: string }).name ?? "")) return null;
      throw error;
    }
    if (entries.length !== 1) return null;
    const [entry] = entries as [Entry];
    try {
      await client.bind(entry.dn, password);
    } catch (error) {
      if ((error as { name?: string }).name === "InvalidCredentialsError") return null;
      throw error;
    }
    return attributesOf(entry);
  });
};
