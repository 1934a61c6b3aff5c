import { ZodError } from "zod";
import type { RequestContext } from "../../../context";
import { inTransaction } from "../../../db/transaction";
import { BadRequestError, NotFoundError } from "../../../errors";
import { mayEditAuthMethod, toAuthConfigDto } from "../shared/auth-config";
import type { AuthConfigRow } from "../shared/auth-config.repository";
import { canBind, isValidLdapFilter, type LdapServer } from "./ldap-client";
import {
  findLdapAuth,
  findLdapAuthWithSecrets,
  insertLdapAuth,
  updateLdapAuth,
  type LdapAuthRow,
  type LdapAuthSecretRow,
} from "./ldap-auth.repository";
import { clearLockouts } from "../shared/lockout.repository";
import {
  authorizeMethodConfig,
  beginAttach,
  beginUpdate,
  insertMethodConfig,
  openSecret,
  revokeMethodConfig,
  sealSecret,
  updateMethodConfig,
  type MethodSpec,
} from "../shared/method-config";
import {
  toLockoutColumns,
  toLockoutDto,
  type CommonAttachInput,
  type CommonUpdateInput,
  type LockoutInput,
} from "../shared/method-inputs";

export const LDAP_SPEC: MethodSpec = {
  method: "ldap-auth",
  label: "LDAP auth",
  duplicateMessage: "Failed to add LDAP Auth to already configured identity",
};
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

const toDto = (config: AuthConfigRow, ldap: LdapAuthRow) => ({
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
  row: Pick<LdapAuthSecretRow, "encrypted_bind_dn" | "encrypted_bind_pass" | "encrypted_ca_cert">,
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

export const attachLdapAuth = async (
  ctx: RequestContext,
  identityId: string,
  body: CommonAttachInput & LdapFields & LockoutInput,
) => {
  const attach = await beginAttach(ctx, identityId, LDAP_SPEC, body, () => assertFilter(body.searchFilter));
  if (!body.bindDN || !body.bindPass || !body.searchBase || !body.url) {
    throw new BadRequestError("Invalid request. Missing bind DN, bind pass, search base, or URL.");
  }
  await assertReachable(ctx, {
    url: body.url,
    bindDN: body.bindDN,
    bindPass: body.bindPass,
    caCert: body.ldapCaCertificate || undefined,
  });
  const { config, extension } = await insertMethodConfig(
    ctx,
    attach.identityId,
    LDAP_SPEC,
    attach.values,
    (trx, configId) =>
      insertLdapAuth(trx, configId, {
        url: body.url,
        search_base: body.searchBase,
        search_filter: body.searchFilter,
        allowed_fields: body.allowedFields ?? null,
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
  );
  return toDto(config, extension);
};

export const getLdapAuth = async (ctx: RequestContext, identityId: string) => {
  const config = await authorizeMethodConfig(ctx, identityId, "read", LDAP_SPEC, NOT_ATTACHED);
  const row = await findLdapAuthWithSecrets(ctx.deps.db, config.id);
  const secrets = openLdapSecrets(ctx, config.id, row);
  // The bind password is a credential: shown only to callers who may edit the method.
  const showCredentials = await mayEditAuthMethod(ctx, identityId, LDAP_SPEC.label);
  return {
    ...toDto(config, row),
    bindDN: secrets.bindDN,
    bindPass: showCredentials ? secrets.bindPass : "",
    ...(secrets.caCert ? { ldapCaCertificate: secrets.caCert } : {}),
  };
};

export const updateLdapAuthConfig = async (
  ctx: RequestContext,
  identityId: string,
  body: CommonUpdateInput & Partial<LdapFields> & Partial<LockoutInput>,
) => {
  const missing = () => new NotFoundError(NOT_ATTACHED);
  const { current, values } = await beginUpdate(ctx, identityId, LDAP_SPEC, missing, body, () =>
    assertFilter(body.searchFilter),
  );
  // Only a change to how Keyward reaches the directory needs a new connection check.
  if (
    body.url !== undefined ||
    body.bindDN !== undefined ||
    body.bindPass !== undefined ||
    body.ldapCaCertificate !== undefined
  ) {
    const storedRow = await findLdapAuthWithSecrets(ctx.deps.db, current.id);
    const stored = openLdapSecrets(ctx, current.id, storedRow);
    await assertReachable(ctx, {
      url: body.url ?? storedRow.url,
      bindDN: body.bindDN ?? stored.bindDN,
      bindPass: body.bindPass ?? stored.bindPass,
      caCert: body.ldapCaCertificate || stored.caCert,
    });
  }
  const { config, extension } = await updateMethodConfig(ctx, current, values, (trx) =>
    updateLdapAuth(trx, current.id, {
      url: body.url,
      search_base: body.searchBase,
      search_filter: body.searchFilter,
      allowed_fields: body.allowedFields,
      encrypted_bind_dn: body.bindDN ? sealSecret(ctx, current.id, "ldap-bind-dn", body.bindDN) : undefined,
      encrypted_bind_pass: body.bindPass ? sealSecret(ctx, current.id, "ldap-bind-pass", body.bindPass) : undefined,
      encrypted_ca_cert: body.ldapCaCertificate
        ? sealSecret(ctx, current.id, "ldap-ca-cert", body.ldapCaCertificate)
        : undefined,
      ...toLockoutColumns(body),
    }),
  );
  return toDto(config, extension);
};

export const revokeLdapAuth = (ctx: RequestContext, identityId: string) =>
  revokeMethodConfig(ctx, identityId, LDAP_SPEC, NOT_ATTACHED, findLdapAuth, toDto);

export const clearLdapLockouts = async (ctx: RequestContext, identityId: string) => {
  const current = await authorizeMethodConfig(
    ctx,
    identityId,
    "update",
    LDAP_SPEC,
    "The identity does not have ldap auth",
  );
  return { deleted: await inTransaction(ctx, (trx) => clearLockouts(trx, current.id, new Date())) };
};
