import { BadRequestError } from "../../errors";

/** A principal as sshd compares it: letters, digits, `.`, `_`, `-`, not starting with `-`, at most 64. */
const PRINCIPAL = /^[a-z0-9._][a-z0-9._-]{0,63}$/i;
const USER_NAME = /^[a-z_][a-z0-9_-]{0,31}$/i;
const KEY_ID = /^[a-z0-9:.-]{1,50}$/i;

/** Whether a name can be a certificate's principal as sshd compares it. */
export const isPrincipal = (name: string) => PRINCIPAL.test(name);

/**
 * The principals a template allows: user certificates name users the template lists (or, with `*`,
 * anything that looks like a user name); host certificates hosts it lists, `*.example.com` admitting
 * any name below it, `*` any host. A wildcard is never a principal itself.
 */
export const checkPrincipals = (
  certType: "user" | "host",
  principals: readonly string[],
  allowed: { users: readonly string[]; hosts: readonly string[] },
) => {
  for (const principal of principals) {
    if (!PRINCIPAL.test(principal)) throw new BadRequestError(`Principal '${principal}' is not a valid principal.`);
    if (certType === "user") {
      if (allowed.users.length === 0) throw new BadRequestError("The template allows no users.");
      const ok = allowed.users.includes("*") ? USER_NAME.test(principal) : allowed.users.includes(principal);
      if (!ok) throw new BadRequestError(`Principal '${principal}' is not in the list of allowed users.`);
      continue;
    }
    const name = principal.toLowerCase();
    const ok = allowed.hosts.some(
      (host) =>
        host === "*" ||
        host.toLowerCase() === name ||
        (host.startsWith("*.") && name.endsWith(host.slice(1).toLowerCase()) && name.length > host.length - 1),
    );
    if (!ok) throw new BadRequestError(`Principal '${principal}' is not in the list of allowed hosts or domains.`);
  }
};

/** The key id: the requested one when the template allows custom ids, else `<actorType>-<actorId>`. */
export const keyIdFor = (requested: string | undefined, allowCustom: boolean, actor: { type: string; id: string }) => {
  const keyId = allowCustom && requested ? requested : `${actor.type}-${actor.id}`;
  if (!KEY_ID.test(keyId))
    throw new BadRequestError("Key ID may hold only letters, digits, '-', ':' and '.', at most 50 characters.");
  return keyId;
};
