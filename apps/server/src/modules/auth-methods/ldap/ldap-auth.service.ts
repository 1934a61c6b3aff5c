import { ZodError } from "zod";
import type { RequestContext } from "../../../context";
import { inTransaction } from "../../../db/transaction";
import { BadRequestError, NotFoundError } from "../../../errors";
import { toAuthConfigDto } from "../shared/auth-config";
import type { AuthConfigRow } from "../shared/auth-config.repository";
import { defineAuthMethod } from "../shared/define-auth-method";
import { clearLockouts } from "../shared/lockout.repository";
import { openSecret, sealSecret } from "../shared/method-config";
import {
  toLockoutColumns,
  toLockoutDto,
  type CommonAttachInput,
  type CommonUpdateInput,
  type LockoutInput,
} from "../shared/method-inputs";
import { toJson } from "../shared/method-repository";
import { canBind, isValidLdapFilter, type LdapServer } from "./ldap-client";
import { ldapAuthRows } from "./ldap-auth.repository";

const NOT_ATTACHED = "The identity does not have LDAP Auth attached";
const CONNECT_FAILED =
  "Failed to connect to LDAP server. Please ensure that the LDAP server is running and your credentials are correct.";

type LdapFields = {
  url: string;
  bindDN: string;
  bindPass: string;
  searchBase: string;
  searchFilter: string;
  allowedFields?: { key: string; value: string }[];
  ldapCaCertificate?: string;
};

const toDto = (config: AuthConfigRow, ldap: Awaited<ReturnType<typeof ldapAuthRows.find>>) => ({
  ...toAuthConfigDto(config),
  url: ldap.url,
  searchBase: ldap.search_base,
  searchFilter: ldap.search_filter,
  allowedFields: ldap.allowed_fields,
  templateId: ldap.template_id,
  ...toLockoutDto(ldap),
});

/** Decrypt the stored bind credentials; fields are bound to the config id. */
export const openLdapSecrets = (
  ctx: Pick<RequestContext, "deps">,
  configId: string,
  row: { encrypted_bind_dn: string; encrypted_bind_pass: string; encrypted_ca_cert: string | null },
) => ({
  bindDN: openSecret(ctx, configId, "ldap-bind-dn", row.encrypted_bind_dn) ?? "",
  bindPass: openSecret(ctx, configId, "ldap-bind-pass", row.encrypted_bind_pass) ?? "",
  caCert: openSecret(ctx, configId, "ldap-ca-cert", row.encrypted_ca_cert),
});

const assertFilter = (filter: string | undefined) => {
  if (filter !== undefined && !isValidLdapFilter(filter)) {
    throw new ZodError([{ code: "custom", path: ["searchFilter"], message: "Invalid LDAP search filter" }]);
  }
};

const assertReachable = async (ctx: RequestContext, server: LdapServer) => {
  if (!(await canBind(server, ctx.deps.env.ALLOW_PRIVATE_OUTBOUND))) throw new BadRequestError(CONNECT_FAILED);
};

export const ldapAuth = defineAuthMethod<
  CommonAttachInput & LdapFields & LockoutInput,
  CommonUpdateInput & Partial<LdapFields> & Partial<LockoutInput>
>()({
  spec: {
    method: "ldap-auth",
    label: "LDAP auth",
    duplicateMessage: "Failed to add LDAP Auth to already configured identity",
  },
  rows: ldapAuthRows,
  missing: {
    get: NOT_ATTACHED,
    update: () => new NotFoundError(NOT_ATTACHED),
    revoke: NOT_ATTACHED,
  },
  toDto,
  // The bind password is a credential: shown only to callers who may edit the method.
  read: async (ctx, config, row, mayEdit) => {
    const secrets = openLdapSecrets(ctx, config.id, row);
    const showCredentials = await mayEdit();
    return {
      ...toDto(config, row),
      bindDN: secrets.bindDN,
      bindPass: showCredentials ? secrets.bindPass : "",
      ...(secrets.caCert ? { ldapCaCertificate: secrets.caCert } : {}),
    };
  },
  attach: {
    row: (ctx, body, configId) => ({
      url: body.url,
      search_base: body.searchBase,
      search_filter: body.searchFilter,
      allowed_fields: toJson(body.allowedFields ?? null),
      encrypted_bind_dn: sealSecret(ctx, configId, "ldap-bind-dn", body.bindDN),
      encrypted_bind_pass: sealSecret(ctx, configId, "ldap-bind-pass", body.bindPass),
      encrypted_ca_cert: body.ldapCaCertificate
        ? sealSecret(ctx, configId, "ldap-ca-cert", body.ldapCaCertificate)
        : null,
      lockout_enabled: body.lockoutEnabled,
      lockout_threshold: body.lockoutThreshold,
      lockout_duration_seconds: body.lockoutDurationSeconds,
      lockout_counter_reset_seconds: body.lockoutCounterResetSeconds,
    }),
    check: (body) => assertFilter(body.searchFilter),
    verify: async (ctx, body) => {
      if (!body.bindDN || !body.bindPass || !body.searchBase || !body.url) {
        throw new BadRequestError("Invalid request. Missing bind DN, bind pass, search base, or URL.");
      }
      await assertReachable(ctx, {
        url: body.url,
        bindDN: body.bindDN,
        bindPass: body.bindPass,
        caCert: body.ldapCaCertificate || undefined,
      });
    },
  },
  update: {
    check: (body) => assertFilter(body.searchFilter),
    // Only a change to how Keyward reaches the directory needs a new connection check.
    verify: async (ctx, body, current) => {
      if (
        body.url === undefined &&
        body.bindDN === undefined &&
        body.bindPass === undefined &&
        body.ldapCaCertificate === undefined
      )
        return;
      const storedRow = await ldapAuthRows.findWithSecrets(ctx.deps.db, current.id);
      const stored = openLdapSecrets(ctx, current.id, storedRow);
      await assertReachable(ctx, {
        url: body.url ?? storedRow.url,
        bindDN: body.bindDN ?? stored.bindDN,
        bindPass: body.bindPass ?? stored.bindPass,
        caCert: body.ldapCaCertificate || stored.caCert,
      });
    },
    row: (ctx, body, configId) => ({
      url: body.url,
      search_base: body.searchBase,
      search_filter: body.searchFilter,
      allowed_fields: toJson(body.allowedFields),
      encrypted_bind_dn: body.bindDN ? sealSecret(ctx, configId, "ldap-bind-dn", body.bindDN) : undefined,
      encrypted_bind_pass: body.bindPass ? sealSecret(ctx, configId, "ldap-bind-pass", body.bindPass) : undefined,
      encrypted_ca_cert: body.ldapCaCertificate
        ? sealSecret(ctx, configId, "ldap-ca-cert", body.ldapCaCertificate)
        : undefined,
      ...toLockoutColumns(body),
    }),
  },
});

export const clearLdapLockouts = async (ctx: RequestContext, identityId: string) => {
  const current = await ldapAuth.authorize(ctx, identityId, "update", "The identity does not have ldap auth");
  return { deleted: await inTransaction(ctx, (trx) => clearLockouts(trx, current.id, new Date())) };
};
