import type { Client } from "ldapts";
import { parseLdif } from "./ldif";
import { renderTemplate } from "./templates";

const SENTINEL = "KWUSERNAMESENTINEL";
const MAX_LISTED = 10_000;

/** `cn=svc-{{Username}},ou=x` split into the RDN's attribute, the text around the username, and the parent. */
const shapeOf = (dn: string) => {
  const comma = dn.search(/(?<!\\),/);
  if (comma < 0) return undefined;
  const rdn = dn.slice(0, comma);
  const equals = rdn.indexOf("=");
  const at = rdn.indexOf(SENTINEL);
  if (equals < 0 || at < equals) return undefined;
  return {
    attribute: rdn.slice(0, equals).trim(),
    prefix: rdn.slice(equals + 1, at),
    suffix: rdn.slice(at + SENTINEL.length),
    parent: dn.slice(comma + 1).trim(),
  };
};

/**
 * The usernames of the entries a creation template makes that carry `marker`, found one level
 * under each parent the template adds entries to (for the orphan sweeper).
 */
export const listLdapEntities = async (client: Client, creationLdif: string, marker: string) => {
  const rendered = renderTemplate(creationLdif, { Username: SENTINEL, Password: "x", EncodedPassword: "eA==" });
  const shapes = parseLdif(rendered).flatMap((record) => {
    const shape = record.type === "add" ? shapeOf(record.dn) : undefined;
    return shape ? [shape] : [];
  });
  const names = new Set<string>();
  for (const shape of shapes) {
    const { searchEntries } = await client
      .search(shape.parent, {
        scope: "one",
        filter: `(${shape.attribute}=*${marker}*)`,
        attributes: ["1.1"],
        sizeLimit: MAX_LISTED,
      })
      .catch((error: unknown) => {
        if ((error as { name?: string }).name === "NoSuchObjectError") return { searchEntries: [] };
        throw error;
      });
    for (const entry of searchEntries) {
      const value = entry.dn.slice(entry.dn.indexOf("=") + 1, entry.dn.search(/(?<!\\),/));
      if (value.startsWith(shape.prefix) && value.endsWith(shape.suffix)) {
        names.add(value.slice(shape.prefix.length, value.length - shape.suffix.length));
      }
    }
  }
  return [...names];
};
