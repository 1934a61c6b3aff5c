import { Attribute, Change, type Client } from "ldapts";
import type { z } from "zod";
import type { LdapInputsSchema } from "@keyward/contract";
import { BadRequestError } from "../../../errors";
import { generatePassword } from "../../connectors/credentials";
import { withLdap as withLdapConnection } from "../../connectors/ldap";
import { parseLdif, type LdifRecord } from "./ldif";
import { listLdapEntities } from "./ldap-entities";
import { assertTemplate, renderTemplate } from "./templates";
import type { Provider, ProviderContext } from "./types";
import { onePage } from "./entity-pages";

export type LdapInputs = z.infer<typeof LdapInputsSchema>;

const TEMPLATE_VALUES = ["Username", "Password", "EncodedPassword"];

/** The template values of the reference; EncodedPassword is Active Directory's unicodePwd form. */
export const ldifValues = (username: string, password = "") => ({
  Username: username,
  Password: password,
  EncodedPassword: Buffer.from(`"${password}"`, "utf16le").toString("base64"),
});

/** A client bound with the root credentials (see connectors/ldap.ts); `secrets` are passwords being set. */
export const withLdap = <T>(
  inputs: LdapInputs,
  ctx: ProviderContext,
  work: (client: Client) => Promise<T>,
  secrets: string[] = [],
) =>
  withLdapConnection(
    { ...ctx, secrets },
    { url: inputs.url, bind: { dn: inputs.binddn, password: inputs.bindpass }, ca: inputs.ca },
    work,
  );

const ALREADY_DONE: readonly string[] = ["NoSuchObjectError", "NoSuchAttributeError"];

/**
 * Apply change records in order. When taking a credential back, a record whose entry or value is
 * already gone counts as done, so revocation can be repeated.
 */
const apply = async (client: Client, records: LdifRecord[], options: { undoing?: boolean } = {}) => {
  const dns: string[] = [];
  for (const record of records) {
    try {
      if (record.type === "add") {
        await client.add(
          record.dn,
          [...record.attributes].map(([type, values]) => new Attribute({ type, values })),
        );
      } else if (record.type === "delete") {
        await client.del(record.dn);
      } else {
        await client.modify(
          record.dn,
          record.changes.map(
            (c) =>
              new Change({
                operation: c.operation,
                modification: new Attribute({ type: c.attribute, values: c.values }),
              }),
          ),
        );
      }
    } catch (error) {
      if (!(options.undoing && ALREADY_DONE.includes((error as { name?: string }).name ?? ""))) throw error;
    }
    dns.push(record.dn);
  }
  return dns;
};

/** The entry a static credential rotates: the first dn of its template. */
const staticDn = (rotationLdif: string) => {
  const dn = /^dn:\s*(.+)$/m.exec(rotationLdif)?.[1]?.trim();
  if (!dn) throw new BadRequestError("Username not found in LDIF");
  return dn;
};

const rotate = async (inputs: Extract<LdapInputs, { credentialType: "static" }>, ctx: ProviderContext) => {
  const username = staticDn(inputs.rotationLdif);
  const password = generatePassword();
  const records = parseLdif(renderTemplate(inputs.rotationLdif, ldifValues(username, password)));
  const dns = await withLdap(inputs, ctx, (client) => apply(client, records), [password]);
  return { username, password, dns };
};

/**
 * `dynamic`: entries made from creationLdif per lease (rollbackLdif undoes a partial creation)
 * and removed with revocationLdif. `static`: one existing entry whose password is set afresh per
 * lease and once more on revocation, so a revoked lease's password stops working.
 */
export const ldapProvider: Provider<LdapInputs> = {
  maxUsernameLength: 64,
  secretsOf: (inputs) => [inputs.bindpass],
  validate: (inputs) => {
    const templates =
      inputs.credentialType === "static"
        ? { rotation: inputs.rotationLdif }
        : { creation: inputs.creationLdif, revocation: inputs.revocationLdif, rollback: inputs.rollbackLdif };
    for (const [label, template] of Object.entries(templates)) {
      assertTemplate(`LDAP ${label}`, template, TEMPLATE_VALUES);
      if (template) parseLdif(renderTemplate(template, ldifValues("kw_check", "Password1")));
    }
    if (inputs.credentialType === "static") staticDn(inputs.rotationLdif);
  },
  verifyConnection: async (inputs, ctx) => {
    await withLdap(inputs, ctx, async () => undefined);
  },
  create: async (inputs, lease, ctx) => {
    if (inputs.credentialType === "static") {
      const { username, password, dns } = await rotate(inputs, ctx);
      return { data: { DN_ARRAY: JSON.stringify(dns), USERNAME: username, PASSWORD: password }, password };
    }
    const password = generatePassword();
    const values = ldifValues(lease.username, password);
    const records = parseLdif(renderTemplate(inputs.creationLdif, values));
    const dns = await withLdap(
      inputs,
      ctx,
      async (client) => {
        try {
          return await apply(client, records);
        } catch (error) {
          if (inputs.rollbackLdif) {
            const rollback = parseLdif(renderTemplate(inputs.rollbackLdif, values));
            await apply(client, rollback, { undoing: true }).catch(() => undefined);
          }
          throw error;
        }
      },
      [password],
    );
    return { data: { DN_ARRAY: JSON.stringify(dns), USERNAME: lease.username, PASSWORD: password }, password };
  },
  renew: async () => undefined,
  revoke: async (inputs, username, ctx) => {
    if (inputs.credentialType === "static") {
      await rotate(inputs, ctx);
      return;
    }
    const records = parseLdif(renderTemplate(inputs.revocationLdif, ldifValues(username)));
    await withLdap(inputs, ctx, (client) => apply(client, records, { undoing: true }));
  },
  listEntities: (inputs, marker, ctx) =>
    onePage(async () =>
      inputs.credentialType === "static"
        ? []
        : withLdap(inputs, ctx, (client) => listLdapEntities(client, inputs.creationLdif, marker)),
    ),
  redact: ({ bindpass: _bindpass, ...rest }) => rest,
};
