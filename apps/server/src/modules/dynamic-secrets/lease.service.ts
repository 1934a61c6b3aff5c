import { randomUUID } from "node:crypto";
import { parseDuration } from "@keyward/contract";
import { isForeignKeyViolation, isUuid } from "../../db/errors";
import { inTransaction } from "../../db/transaction";
import { noteAudit, type RequestContext } from "../../context";
import { AppError, BadRequestError, NotFoundError } from "../../errors";
import { assertCan } from "../authz/guard";
import {
  DELETING_STATUS,
  findDynamicSecretById,
  findEncryptedInputs,
  type DynamicSecretRow,
} from "./dynamic-secret.repository";
import { permissionObjectOf, toDynamicSecretDto, toLeaseDto } from "./dynamic-secret.dto";
import {
  decryptInputs,
  folderNotFound,
  getDynamicSecretProjectPermission,
  providerContext,
  providerOf,
  requireDynamicSecret,
  requireFolder,
  type Scope,
} from "./dynamic-secret.scope";
import { failpoint } from "../../lib/failpoint";
import { claimSeconds, revokeClaimedLease } from "./lease-revoker";
import {
  activateLease,
  claimLease,
  countLeasesOf,
  deleteLeaseById,
  findLease,
  insertLeaseRow,
  lockDynamicSecretForLeases,
  listLeasePageOf,
  listLeasesOf,
  markCreationFailed,
  markForRevocation,
  releaseRenewal,
  type LeaseIntent,
} from "./lease.repository";
import type { Provider } from "./providers";
import { leaseEntityName, redactSecrets, renderUsername } from "./providers/templates";

const SUBJECT = "dynamic-secrets";
/** A page's size when only an offset is given. */
const DEFAULT_LEASE_PAGE = 100;

const errorText = (error: unknown, provider: Provider<unknown>, inputs: unknown, extra: (string | undefined)[] = []) =>
  redactSecrets(error instanceof Error ? error.message : String(error), [...provider.secretsOf(inputs), ...extra]);

const loadInputs = async (ctx: RequestContext, secret: DynamicSecretRow) => {
  const { provider } = providerOf(secret.type);
  const inputs = decryptInputs(ctx, secret.id, (await findEncryptedInputs(ctx.deps.db, secret.id)) ?? "");
  return { provider, inputs };
};

/** The scope's folder and dynamic secret, then the `lease` check on the secret (reference order). */
const secretForLeasing = async (ctx: RequestContext, name: string, scope: Scope) => {
  const { project, ability } = await getDynamicSecretProjectPermission(ctx, scope.projectSlug);
  const folder = await requireFolder(ctx, project.id, scope, folderNotFound.lease);
  const secret = await requireDynamicSecret(
    ctx,
    folder.id,
    name,
    `Dynamic secret with name '${name}' in folder with path '${scope.path}' not found`,
  );
  assertCan(ability, "lease", SUBJECT, permissionObjectOf(scope.environmentSlug, scope.path, secret.metadata));
  return secret;
};

/** A lease of the scope's folder; one elsewhere (another project, folder or org) is simply not found. */
const leaseInScope = async (ctx: RequestContext, leaseId: string, scope: Scope) => {
  const { project, ability } = await getDynamicSecretProjectPermission(ctx, scope.projectSlug);
  const folder = await requireFolder(ctx, project.id, scope, folderNotFound.lease);
  const lease = isUuid(leaseId) ? await findLease(ctx.deps.db, leaseId, new Date(ctx.deps.clock.now())) : undefined;
  const secret =
    lease && lease.folder_id === folder.id && lease.state !== "creating"
      ? await findDynamicSecretById(ctx.deps.db, lease.dynamic_secret_id)
      : undefined;
  if (!lease || !secret) throw new NotFoundError(`Dynamic secret lease with ID '${leaseId}' not found`);
  assertCan(ability, "lease", SUBJECT, permissionObjectOf(scope.environmentSlug, scope.path, secret.metadata));
  return { lease, secret };
};

/** Take back whatever a failed creation may have made; if that fails too, the job retries it. */
/**
 * The intent, committed before any credential exists, so a crash can never leave one unaccounted
 * for. The secret's row is locked while its leases are counted, so parallel creations cannot pass
 * the limit together; "gone" or "deleting" when the secret was deleted (or marked) since it was read.
 */
const insertLeaseIntent = (ctx: RequestContext, values: LeaseIntent, maxLeases: number) =>
  // The request's event is written when the lease becomes active, not with the intent: no scope here.
  inTransaction(ctx.deps.db, async (trx) => {
    const secret = await lockDynamicSecretForLeases(trx, values.dynamic_secret_id);
    if (!secret) return "gone" as const;
    if (secret.status === DELETING_STATUS) return "deleting" as const;
    if ((await countLeasesOf(trx, values.dynamic_secret_id)) >= maxLeases) return "full" as const;
    return insertLeaseRow(trx, values);
  });

const undoCreation = async (
  ctx: RequestContext,
  provider: Provider<unknown>,
  inputs: unknown,
  leaseId: string,
  username: string,
  reason: string,
) => {
  try {
    await provider.revoke(inputs, username, providerContext(ctx.deps));
    await deleteLeaseById(ctx.deps.db, leaseId);
  } catch {
    await markCreationFailed(ctx.deps.db, leaseId, reason);
  }
};

/**
 * The lease row (state `creating`) is committed before the provider is
 * called, so whatever happens next, the credential is always traceable to a row that the
 * revocation job will act on.
 */
export const createLease = async (
  ctx: RequestContext,
  body: Scope & { dynamicSecretName: string; ttl?: string; config?: unknown },
) => {
  const secret = await secretForLeasing(ctx, body.dynamicSecretName, body);
  const beingDeleted = () => new BadRequestError("The dynamic secret is being deleted");
  if (secret.status === DELETING_STATUS) throw beingDeleted();
  const maxLeases = ctx.deps.env.MAX_LEASE_LIMIT;
  const limitReached = () => new BadRequestError(`Max lease limit reached. Limit: ${maxLeases}`);
  // Checked here for the reference's order of errors; the insert below re-checks under a lock.
  if ((await countLeasesOf(ctx.deps.db, secret.id)) >= maxLeases) throw limitReached();
  const now = ctx.deps.clock.now();
  const expireAt = new Date(now + parseDuration(body.ttl || secret.default_ttl)!);
  if (secret.max_ttl && expireAt.getTime() > now + parseDuration(secret.max_ttl)!) {
    throw new BadRequestError("TTL cannot be larger than max TTL");
  }

  const { provider, inputs } = await loadInputs(ctx, secret);
  const leaseId = randomUUID();
  noteAudit(ctx, { metadata: { leaseId, dynamicSecretId: secret.id } });
  const username = renderUsername(
    secret.username_template,
    leaseEntityName(secret.entity_prefix, leaseId),
    ctx.actor.name,
  );
  if (username.length > provider.maxUsernameLength) {
    throw new BadRequestError(`The generated username is longer than ${provider.maxUsernameLength} characters`);
  }

  const notFound = `Dynamic secret with name '${body.dynamicSecretName}' in folder with path '${body.path}' not found`;
  const intent = await insertLeaseIntent(
    ctx,
    {
      id: leaseId,
      dynamic_secret_id: secret.id,
      external_entity_id: username,
      expire_at: expireAt,
      config: body.config,
    },
    maxLeases,
  ).catch((error: unknown) => {
    throw isForeignKeyViolation(error) ? new NotFoundError(notFound) : error;
  });
  // Nothing was created yet, so there is nothing to undo.
  if (intent === "gone") throw new NotFoundError(notFound);
  if (intent === "deleting") throw beingDeleted();
  if (intent === "full") throw limitReached();
  failpoint(ctx.deps.env, "lease-after-intent");
  let created: Awaited<ReturnType<Provider<unknown>["create"]>>;
  try {
    created = await provider.create(inputs, { username, expireAt }, providerContext(ctx.deps));
  } catch (error) {
    const reason = errorText(error, provider, inputs);
    await undoCreation(ctx, provider, inputs, leaseId, username, reason);
    throw error instanceof AppError ? error : new BadRequestError(`Failed to create lease from provider: ${reason}`);
  }
  failpoint(ctx.deps.env, "lease-after-provider");
  const abandoned = new Error("abandoned");
  // The lease's event commits with its activation: a creation that is undone records nothing.
  const lease = await inTransaction(ctx, async (trx) => {
    const row = await activateLease(trx, leaseId);
    if (!row) throw abandoned;
    return row;
  }).catch((error: unknown) => {
    if (error === abandoned) return undefined;
    throw error;
  });
  if (!lease) {
    await undoCreation(
      ctx,
      provider,
      inputs,
      leaseId,
      username,
      "The lease was abandoned before its credential was handed out",
    );
    throw new BadRequestError("The lease was abandoned before its credential was ready; please try again");
  }
  return { lease: toLeaseDto(lease), dynamicSecret: toDynamicSecretDto(secret), data: created.data };
};

export const getLease = async (ctx: RequestContext, leaseId: string, scope: Scope) => {
  const { lease, secret } = await leaseInScope(ctx, leaseId, scope);
  return { ...toLeaseDto(lease), dynamicSecret: toDynamicSecretDto(secret) };
};

/**
 * Without offset or limit every lease comes back, as the reference answers; with either, one page
 * (limit 100 unless given) and the count beside it, both served by the secret's lease index.
 */
export const listLeases = async (
  ctx: RequestContext,
  name: string,
  query: Scope & { offset?: number; limit?: number },
) => {
  const secret = await secretForLeasing(ctx, name, query);
  if (query.offset === undefined && query.limit === undefined) {
    const leases = (await listLeasesOf(ctx.deps.db, secret.id)).map(toLeaseDto);
    return { leases, totalCount: leases.length };
  }
  const page = { offset: query.offset ?? 0, limit: query.limit ?? DEFAULT_LEASE_PAGE };
  const [rows, totalCount] = await Promise.all([
    listLeasePageOf(ctx.deps.db, secret.id, page),
    countLeasesOf(ctx.deps.db, secret.id, { listed: true }),
  ]);
  return { leases: rows.map(toLeaseDto), totalCount };
};

/**
 * Extends from the current expiry; the max TTL counts from creation. The lease is claimed during
 * the provider call so the revocation job cannot take it back halfway through a renewal.
 */
export const renewLease = async (ctx: RequestContext, leaseId: string, body: Scope & { ttl?: string }) => {
  const { lease, secret } = await leaseInScope(ctx, leaseId, body);
  const expireAt = new Date(new Date(lease.expire_at).getTime() + parseDuration(body.ttl || secret.default_ttl)!);
  if (secret.max_ttl && expireAt.getTime() > new Date(lease.created_at).getTime() + parseDuration(secret.max_ttl)!) {
    throw new BadRequestError(
      "The requested renewal would exceed the maximum allowed lease duration. Please choose a shorter TTL",
    );
  }
  const { provider, inputs } = await loadInputs(ctx, secret);
  const token = randomUUID();
  const claimed = await claimLease(ctx.deps.db, lease.id, token, claimSeconds(ctx.deps), {
    onlyUnexpired: new Date(ctx.deps.clock.now()),
  });
  if (!claimed) throw new NotFoundError(`Dynamic secret lease with ID '${leaseId}' not found`);
  try {
    await provider.renew(inputs, lease.external_entity_id, expireAt, providerContext(ctx.deps));
  } catch (error) {
    await releaseRenewal(ctx.deps.db, lease.id, token);
    if (error instanceof AppError) throw error;
    throw new BadRequestError(`Failed to renew lease from provider: ${errorText(error, provider, inputs)}`);
  }
  noteAudit(ctx, { metadata: { dynamicSecretId: secret.id } });
  return toLeaseDto((await inTransaction(ctx, (trx) => releaseRenewal(trx, lease.id, token, expireAt))) ?? claimed);
};

/** How long a revocation waits for a renewal in progress (its provider call) to finish. */
const RENEWAL_WAIT_MS = 2_000;
const RENEWAL_POLL_MS = 50;

/**
 * Claim a lease for revocation. While a renewal holds it (on this or another instance), it is first
 * marked `revoking` so it cannot be renewed again and the revocation job takes it back once the
 * renewal lets go, then claimed here if that happens within a short wait.
 */
const claimForRevocation = async (ctx: RequestContext, leaseId: string, token: string) => {
  const claim = () => claimLease(ctx.deps.db, leaseId, token, claimSeconds(ctx.deps), { state: "revoking" });
  const claimed = await claim();
  if (claimed) return { claimed };
  const marked = await markForRevocation(ctx.deps.db, leaseId);
  // Not active: another revocation holds it (or it is gone), and that revocation finishes the job.
  if (!marked) return {};
  for (let waited = 0; waited < RENEWAL_WAIT_MS; waited += RENEWAL_POLL_MS) {
    await new Promise((resolve) => setTimeout(resolve, RENEWAL_POLL_MS));
    const later = await claim();
    if (later) return { claimed: later };
  }
  return { pending: marked };
};

/**
 * Revoke now. A provider failure leaves the lease with status "Failed to delete" (retried in the
 * background) unless isForced, which drops the row anyway. A lease someone else still holds after
 * a short wait (a slow renewal, or another revocation) is returned as it stands, marked for the
 * revocation job.
 */
export const revokeLease = async (ctx: RequestContext, leaseId: string, body: Scope & { isForced: boolean }) => {
  const { lease } = await leaseInScope(ctx, leaseId, body);
  noteAudit(ctx, { metadata: { dynamicSecretId: lease.dynamic_secret_id } });
  const token = randomUUID();
  const { claimed, pending } = await claimForRevocation(ctx, lease.id, token);
  if (!claimed) return toLeaseDto(pending ?? lease);
  const { row } = await revokeClaimedLease(ctx, claimed, token, { isForced: body.isForced });
  return toLeaseDto(row);
};
