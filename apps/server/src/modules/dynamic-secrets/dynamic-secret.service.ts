import { randomBytes, randomUUID } from "node:crypto";
import type { DynamicSecretProvider } from "@keyward/contract";
import { isUniqueViolation } from "../../db/errors";
import { inTransaction } from "../../db/transaction";
import { AppError, BadRequestError, NotFoundError } from "../../errors";
import { noteAudit, type RequestContext } from "../../context";
import { assertCan } from "../authz/guard";
import {
  DELETING_STATUS,
  deleteDynamicSecretWithoutLeases,
  detachDynamicSecret,
  findDynamicSecretByName,
  findEncryptedInputs,
  insertDynamicSecret,
  listDynamicSecretsInFolder,
  updateDynamicSecret,
  type DynamicSecretRow,
} from "./dynamic-secret.repository";
import { permissionObjectOf, toDynamicSecretDto } from "./dynamic-secret.dto";
import {
  decryptInputs,
  encryptInputs,
  folderNotFound,
  getDynamicSecretProjectPermission,
  providerContext,
  providerOf,
  requireDynamicSecret,
  requireFolder,
  type Scope,
} from "./dynamic-secret.scope";
import { assertSupportedProvider, type Provider } from "./providers";
import { redactSecrets } from "./providers/templates";

type Metadata = { key: string; value: string }[];

const ALREADY_EXISTS = "Provided dynamic secret already exists under the folder";
const SUBJECT = "dynamic-secrets";

const notFound = (name: string, scope: Scope) =>
  `Dynamic secret with name '${name}' in folder '${scope.path}' not found`;

/** `kw_` and 8 random characters: the marker every credential of this secret carries. */
const newEntityPrefix = () => `kw_${randomBytes(5).toString("hex").slice(0, 8)}`;

const verifyConnection = async (ctx: RequestContext, provider: Provider<unknown>, inputs: unknown) => {
  try {
    await provider.verifyConnection(inputs, providerContext(ctx.deps));
  } catch (error) {
    if (error instanceof AppError) throw error;
    const message = redactSecrets(error instanceof Error ? error.message : String(error), provider.secretsOf(inputs));
    throw new BadRequestError(`Failed to connect with provider: ${message}`);
  }
};

const withInputs = (row: DynamicSecretRow, inputs: Record<string, unknown>) => ({ ...toDynamicSecretDto(row), inputs });

/** Where root credentials are sent, and the inputs holding them (by provider). */
const TARGET_KEYS = ["host", "port", "url"];
const ROOT_SECRET_KEYS = ["password", "bindpass"];
/** Inputs that decide how existing credentials are taken back: changing them would strand those credentials. */
const FIXED_KEYS = ["client", "credentialType"];

/**
 * Root credentials go wherever host and port point. An edit that moves them elsewhere must supply
 * the password itself: otherwise anyone allowed to edit could send the stored one to a server of
 * their choosing and read it there, without ever being allowed to see it.
 */
const assertPasswordResupplied = (
  stored: Record<string, unknown>,
  updated: Record<string, unknown>,
  given: Record<string, unknown>,
) => {
  const kept = ROOT_SECRET_KEYS.some(
    (key) => typeof stored[key] === "string" && stored[key] !== "" && given[key] === undefined,
  );
  if (kept && TARGET_KEYS.some((key) => updated[key] !== stored[key])) {
    throw new BadRequestError("The root password must be provided again when the host or port changes");
  }
  for (const key of FIXED_KEYS) {
    if (stored[key] !== updated[key]) throw new BadRequestError(`The ${key} of a dynamic secret cannot be changed`);
  }
};

export const createDynamicSecret = async (
  ctx: RequestContext,
  body: Scope & {
    name: string;
    provider: DynamicSecretProvider;
    defaultTTL: string;
    maxTTL?: string | null;
    metadata?: Metadata;
    usernameTemplate?: string;
  },
) => {
  const { project, ability } = await getDynamicSecretProjectPermission(ctx, body.projectSlug);
  assertCan(
    ability,
    "create-root-credential",
    SUBJECT,
    permissionObjectOf(body.environmentSlug, body.path, body.metadata),
  );
  const folder = await requireFolder(ctx, project.id, body, folderNotFound.secret);
  if (await findDynamicSecretByName(ctx.deps.db, folder.id, body.name)) throw new BadRequestError(ALREADY_EXISTS);

  assertSupportedProvider(body.provider.type, body.provider.inputs);
  const { provider } = providerOf(body.provider.type);
  const inputs = body.provider.inputs;
  provider.validate(inputs);
  await verifyConnection(ctx, provider, inputs);

  const id = randomUUID();
  noteAudit(ctx, { metadata: { dynamicSecretId: id } });
  try {
    const row = await inTransaction(ctx, (trx) =>
      insertDynamicSecret(trx, {
        id,
        folder_id: folder.id,
        name: body.name,
        type: body.provider.type,
        entity_prefix: newEntityPrefix(),
        encrypted_inputs: encryptInputs(ctx, id, inputs),
        default_ttl: body.defaultTTL,
        max_ttl: body.maxTTL ?? null,
        username_template: body.usernameTemplate ?? null,
        metadata: body.metadata ?? [],
      }),
    );
    return withInputs(row, provider.redact(inputs));
  } catch (error) {
    if (isUniqueViolation(error)) throw new BadRequestError(ALREADY_EXISTS);
    throw error;
  }
};

/** A secret and its decrypted root inputs, after the reference's lookups and an object-level check. */
const loadForAction = async (ctx: RequestContext, name: string, scope: Scope, action: string) => {
  const { project, ability } = await getDynamicSecretProjectPermission(ctx, scope.projectSlug);
  const folder = await requireFolder(ctx, project.id, scope, folderNotFound.secret);
  const secret = await requireDynamicSecret(ctx, folder.id, name, notFound(name, scope));
  assertCan(ability, action, SUBJECT, permissionObjectOf(scope.environmentSlug, scope.path, secret.metadata));
  return { ability, folder, secret };
};

const storedInputs = async (ctx: RequestContext, secret: DynamicSecretRow) =>
  decryptInputs(ctx, secret.id, (await findEncryptedInputs(ctx.deps.db, secret.id)) ?? "") as Record<string, unknown>;

export const updateDynamicSecretByName = async (
  ctx: RequestContext,
  name: string,
  body: Scope & {
    data: {
      inputs?: Record<string, unknown>;
      defaultTTL?: string;
      maxTTL?: string | null;
      newName?: string;
      metadata?: Metadata;
      usernameTemplate?: string | null;
    };
  },
) => {
  const { data } = body;
  const { ability, folder, secret } = await loadForAction(ctx, name, body, "edit-root-credential");
  if (data.metadata)
    assertCan(
      ability,
      "edit-root-credential",
      SUBJECT,
      permissionObjectOf(body.environmentSlug, body.path, data.metadata),
    );
  if (
    data.newName &&
    data.newName !== secret.name &&
    (await findDynamicSecretByName(ctx.deps.db, folder.id, data.newName))
  ) {
    throw new BadRequestError(ALREADY_EXISTS);
  }

  const { schema, provider } = providerOf(secret.type);
  const stored = await storedInputs(ctx, secret);
  let inputs: unknown = stored;
  if (data.inputs) {
    // Reads never return root secrets, so an edit that leaves them out keeps the stored ones.
    inputs = schema.parse({ ...stored, ...data.inputs });
    assertPasswordResupplied(stored, inputs as Record<string, unknown>, data.inputs);
    provider.validate(inputs);
    await verifyConnection(ctx, provider, inputs);
  }
  noteAudit(ctx, { metadata: { dynamicSecretId: secret.id } });
  try {
    const row = await inTransaction(ctx, async (trx) => {
      const updated = await updateDynamicSecret(trx, secret.id, {
        name: data.newName,
        encrypted_inputs: data.inputs ? encryptInputs(ctx, secret.id, inputs) : undefined,
        default_ttl: data.defaultTTL,
        max_ttl: data.maxTTL,
        username_template: data.usernameTemplate,
        metadata: data.metadata,
      });
      // Deleted by someone else since it was read.
      if (!updated) throw new NotFoundError(notFound(name, body));
      return updated;
    });
    const canRead = ability.can(
      "read-root-credential",
      SUBJECT,
      permissionObjectOf(body.environmentSlug, body.path, row.metadata),
    );
    return withInputs(row, canRead ? provider.redact(inputs) : {});
  } catch (error) {
    if (isUniqueViolation(error)) throw new BadRequestError(ALREADY_EXISTS);
    throw error;
  }
};

/**
 * Without leases the secret goes at once. With leases it is marked Deleting and the revocation job
 * takes every credential back before removing it. isForced removes it from its folder at once (as
 * the reference deletes it), but its root credentials stay with the job so the credentials it
 * handed out are still taken back rather than left to live on the target.
 */
export const deleteDynamicSecretByName = async (
  ctx: RequestContext,
  name: string,
  body: Scope & { isForced: boolean },
) => {
  const { secret } = await loadForAction(ctx, name, body, "delete-root-credential");
  noteAudit(ctx, { metadata: { dynamicSecretId: secret.id } });
  return inTransaction(ctx, async (trx) => {
    const deleted = await deleteDynamicSecretWithoutLeases(trx, secret.id);
    if (deleted) return toDynamicSecretDto(deleted);
    const kept = body.isForced
      ? await detachDynamicSecret(trx, secret.id)
      : await updateDynamicSecret(trx, secret.id, { status: DELETING_STATUS, status_details: null });
    // Neither deleted nor found: a concurrent delete took it first.
    if (!kept) throw new NotFoundError(notFound(name, body));
    return toDynamicSecretDto(body.isForced ? secret : kept);
  });
};

/** Reading the details shows the (redacted) inputs, so it takes both read and edit (reference). */
export const getDynamicSecretByName = async (ctx: RequestContext, name: string, scope: Scope) => {
  const { ability, secret } = await loadForAction(ctx, name, scope, "read-root-credential");
  assertCan(
    ability,
    "edit-root-credential",
    SUBJECT,
    permissionObjectOf(scope.environmentSlug, scope.path, secret.metadata),
  );
  return withInputs(secret, providerOf(secret.type).provider.redact(await storedInputs(ctx, secret)));
};

/** The folder's dynamic secrets the caller may read, judged one by one on their metadata. */
export const listDynamicSecrets = async (ctx: RequestContext, scope: Scope) => {
  const { project, ability } = await getDynamicSecretProjectPermission(ctx, scope.projectSlug);
  assertCan(ability, "read-root-credential", SUBJECT, permissionObjectOf(scope.environmentSlug, scope.path));
  const folder = await requireFolder(ctx, project.id, scope, folderNotFound.secret);
  const rows = await listDynamicSecretsInFolder(ctx.deps.db, folder.id);
  return rows
    .filter((row) =>
      ability.can("read-root-credential", SUBJECT, permissionObjectOf(scope.environmentSlug, scope.path, row.metadata)),
    )
    .map(toDynamicSecretDto);
};
