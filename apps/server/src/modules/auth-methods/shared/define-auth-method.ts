import type { RequestContext } from "../../../context";
import type { Database } from "../../../db/database";
import { authorizeAuthMethodOperation, mayEditAuthMethod, toAuthConfigValues } from "./auth-config";
import type { AuthConfigRow } from "./auth-config.repository";
import {
  assertNotAttached,
  authorizeMethodConfig,
  beginUpdate,
  insertMethodConfig,
  revokeMethodConfig,
  updateMethodConfig,
  type MethodSpec,
  type NotAttached,
} from "./method-config";
import type { CommonAttachInput, CommonUpdateInput } from "./method-inputs";

/** A method's own row as the definition reads and writes it (see `methodTable`). */
export type MethodRows<Row, SecretRow extends Row, Insert, Update> = {
  find: (db: Database, configId: string) => Promise<Row>;
  findWithSecrets: (db: Database, configId: string) => Promise<SecretRow>;
  insert: (db: Database, configId: string, values: Insert) => Promise<SecretRow>;
  update: (db: Database, configId: string, values: Update) => Promise<SecretRow>;
};

/** What to answer when the method is not attached; a function may name the identity. */
export type Missing = string | ((identityId: string) => Error);

const notAttached = (missing: Missing, identityId: string): NotAttached =>
  typeof missing === "string" ? missing : () => missing(identityId);

/**
 * One auth method's attach, get, update and revoke, from what is its own: its row, its fields'
 * columns, its checks and its response. The order of checks is the same for every method, so
 * errors keep the reference's order: permission, the method's input checks (`check`), the common
 * values (TTL within max TTL, trusted IPs), a second attach, then the method's slower checks
 * (`verify`: outbound addresses, directory binds), then the transaction. The bodies are the
 * contract's, named first: `defineAuthMethod<AttachBody, UpdateBody>()({ … })`.
 */
export const defineAuthMethod =
  <AttachBody extends CommonAttachInput, UpdateBody extends CommonUpdateInput>() =>
  <
    Row,
    SecretRow extends Row,
    Insert,
    Update,
    Dto,
    Shown = Dto,
    Read = Shown,
    Parsed = undefined,
    Verified = undefined,
  >(def: {
    spec: MethodSpec;
    rows: MethodRows<Row, SecretRow, Insert, Update>;
    /** The answers for a missing config, per route. */
    missing: { get: Missing; update: Missing; revoke: Missing };
    /** The config without its sealed fields: revoke's answer, and the default for every route. */
    toDto: (config: AuthConfigRow, row: Row) => Dto;
    /** Attach's and update's answer, with sealed fields opened. */
    show?: (ctx: RequestContext, config: AuthConfigRow, row: SecretRow) => Shown;
    /** Get's answer; `mayEdit` says whether the caller could change the method (credentials shown). */
    read?: (ctx: RequestContext, config: AuthConfigRow, row: SecretRow, mayEdit: () => Promise<boolean>) => Read;
    attach: {
      check?: (body: AttachBody) => void;
      /** Own fields parsed once the common values passed, before the duplicate check. */
      parse?: (body: AttachBody) => Parsed;
      verify?: (ctx: RequestContext, body: AttachBody) => Promise<unknown>;
      row: (ctx: RequestContext, body: AttachBody, configId: string, parsed: Parsed) => Insert;
    };
    update: {
      check?: (body: UpdateBody) => void;
      verify?: (ctx: RequestContext, body: UpdateBody, current: AuthConfigRow) => Promise<Verified> | Verified;
      row: (ctx: RequestContext, body: UpdateBody, configId: string, verified: Verified) => Update;
    };
  }) => {
    const { spec, rows } = def;
    const show = (ctx: RequestContext, config: AuthConfigRow, row: SecretRow) =>
      def.show ? def.show(ctx, config, row) : (def.toDto(config, row) as unknown as Shown);

    const attach = async (ctx: RequestContext, identityId: string, body: AttachBody) => {
      const identity = await authorizeAuthMethodOperation(ctx, identityId, "attach", spec.label);
      def.attach.check?.(body);
      const values = toAuthConfigValues(body);
      const parsed = def.attach.parse?.(body) as Parsed;
      await assertNotAttached(ctx, identity.id, spec);
      await def.attach.verify?.(ctx, body);
      const { config, extension } = await insertMethodConfig(ctx, identity.id, spec, values, (trx, configId) =>
        rows.insert(trx, configId, def.attach.row(ctx, body, configId, parsed)),
      );
      return show(ctx, config, extension);
    };

    const get = async (ctx: RequestContext, identityId: string) => {
      const config = await authorizeMethodConfig(
        ctx,
        identityId,
        "read",
        spec,
        notAttached(def.missing.get, identityId),
      );
      const row = await rows.findWithSecrets(ctx.deps.db, config.id);
      if (!def.read) return show(ctx, config, row) as unknown as Read;
      return def.read(ctx, config, row, () => mayEditAuthMethod(ctx, identityId, spec.label));
    };

    const update = async (ctx: RequestContext, identityId: string, body: UpdateBody) => {
      const missing = notAttached(def.missing.update, identityId);
      const check = def.update.check && (() => def.update.check?.(body));
      const { current, values } = await beginUpdate(ctx, identityId, spec, missing, body, check);
      const verified = (await def.update.verify?.(ctx, body, current)) as Verified;
      const { config, extension } = await updateMethodConfig(ctx, current, values, (trx) =>
        rows.update(trx, current.id, def.update.row(ctx, body, current.id, verified)),
      );
      return show(ctx, config, extension);
    };

    const revoke = (ctx: RequestContext, identityId: string) =>
      revokeMethodConfig(ctx, identityId, spec, notAttached(def.missing.revoke, identityId), rows.find, def.toDto);

    /** The opening of the method's other routes (clear-lockouts): permission, then the attached config. */
    const authorize = (ctx: RequestContext, identityId: string, operation: "update" | "read", missing: Missing) =>
      authorizeMethodConfig(ctx, identityId, operation, spec, notAttached(missing, identityId));

    return { spec, attach, get, update, revoke, authorize };
  };

/** A sealed field's column on write: undefined leaves it, an empty value clears it. */
export const sealOrClear = <T>(
  value: T | undefined,
  present: (value: T) => boolean,
  seal: (value: T) => string,
): string | null | undefined => (value === undefined ? undefined : present(value) ? seal(value) : null);
