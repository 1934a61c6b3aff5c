import { randomBytes } from "node:crypto";
import type { AuditLogStream } from "@keyward/contract";
import { inTransaction } from "../../../db/transaction";
import { isUuid } from "../../../db/errors";
import { BadRequestError, NotFoundError } from "../../../errors";
import { toIso } from "../../../lib/dates";
import { assertCan } from "../../authz/guard";
import { orgAbilityOf } from "../../authz/org-access";
import { noteAudit, type RequestContext } from "../../../context";
import { postToReceiver, type StreamHeader } from "./stream-delivery";
import {
  deleteStream,
  findStream,
  findStreamSecrets,
  insertStream,
  listStreams,
  setStreamSealedSecrets,
  updateStream,
  type StreamRow,
} from "./streams.repository";

const PROVIDERS: Record<string, string> = { custom: "Custom" };

const assertProvider = (provider: string) => {
  if (!Object.hasOwn(PROVIDERS, provider)) {
    throw new BadRequestError(`Audit log stream provider '${provider}' is not supported`);
  }
};

const toDto = (row: StreamRow): AuditLogStream => ({
  id: row.id,
  orgId: row.org_id,
  provider: row.provider,
  credentials: { url: row.url, headers: (row.header_names as string[]).map((key) => ({ key })) },
  createdAt: toIso(row.created_at),
  updatedAt: toIso(row.updated_at),
  pendingEvents: Number(row.pending ?? 0),
  lastError: row.last_error,
});

/** Stream settings are org settings. */
const authorize = (ctx: RequestContext, action: "read" | "create" | "edit" | "delete") =>
  assertCan(orgAbilityOf(ctx.actor), action, "settings");

const streamOf = async (ctx: RequestContext, provider: string, id: string) => {
  const row = isUuid(id) ? await findStream(ctx.deps.db, ctx.actor.orgId, id) : undefined;
  if (!row || row.provider !== provider) throw new NotFoundError(`Audit log stream with ID '${id}' not found`);
  return row;
};

/** The receiver must answer the ping before a stream is saved; no redirects are followed. */
const ping = async (ctx: RequestContext, url: string, headers: StreamHeader[]) => {
  try {
    await postToReceiver(ctx.deps, url, headers, JSON.stringify({ ping: "ok" }));
  } catch (error) {
    if (error instanceof BadRequestError) throw error;
    throw new BadRequestError(`Failed to connect with upstream source: ${(error as Error).message}`);
  }
};

const sealHeaders = (ctx: RequestContext, id: string, headers: StreamHeader[]) =>
  ctx.deps.secretBox.encrypt(JSON.stringify(headers), `audit-stream:${id}:headers`);

export const streamProviderOptions = () => ({
  providerOptions: Object.entries(PROVIDERS).map(([provider, name]) => ({ provider, name })),
});

export const listAuditLogStreams = async (ctx: RequestContext) => {
  authorize(ctx, "read");
  return { auditLogStreams: (await listStreams(ctx.deps.db, ctx.actor.orgId)).map(toDto) };
};

export const getAuditLogStream = async (ctx: RequestContext, provider: string, id: string) => {
  authorize(ctx, "read");
  return { auditLogStream: toDto(await streamOf(ctx, provider, id)) };
};

export const createAuditLogStream = async (
  ctx: RequestContext,
  provider: string,
  credentials: { url: string; headers: StreamHeader[] },
) => {
  authorize(ctx, "create");
  assertProvider(provider);
  await ping(ctx, credentials.url, credentials.headers);
  const signingSecret = randomBytes(32).toString("base64url");
  const id = await inTransaction(ctx, async (trx) => {
    const { id } = await insertStream(trx, {
      org_id: ctx.actor.orgId,
      provider,
      url: credentials.url,
      header_names: credentials.headers.map((h) => h.key),
      // Sealed under a placeholder row context first would not bind the id: the id is known only now.
      encrypted_headers: "pending",
      encrypted_signing_secret: "pending",
    });
    await setStreamSealedSecrets(trx, id, {
      encrypted_headers: sealHeaders(ctx, id, credentials.headers),
      encrypted_signing_secret: ctx.deps.secretBox.encrypt(signingSecret, `audit-stream:${id}:secret`),
    });
    noteAudit(ctx, { metadata: { logStreamId: id, provider, url: credentials.url } });
    return id;
  });
  return { auditLogStream: toDto((await findStream(ctx.deps.db, ctx.actor.orgId, id))!), signingSecret };
};

export const updateAuditLogStream = async (
  ctx: RequestContext,
  provider: string,
  id: string,
  credentials: { url?: string; headers?: StreamHeader[] },
) => {
  authorize(ctx, "edit");
  const existing = await streamOf(ctx, provider, id);
  const secrets = (await findStreamSecrets(ctx.deps.db, existing.id))!;
  const headers =
    credentials.headers ??
    (JSON.parse(ctx.deps.secretBox.decrypt(secrets.encrypted_headers, `audit-stream:${id}:headers`)) as StreamHeader[]);
  const url = credentials.url ?? existing.url;
  await ping(ctx, url, headers);
  await inTransaction(ctx, async (trx) => {
    await updateStream(trx, existing.id, {
      url,
      header_names: headers.map((h) => h.key),
      encrypted_headers: sealHeaders(ctx, existing.id, headers),
    });
    noteAudit(ctx, { metadata: { url } });
  });
  return { auditLogStream: toDto((await findStream(ctx.deps.db, ctx.actor.orgId, id))!) };
};

export const deleteAuditLogStream = async (ctx: RequestContext, provider: string, id: string) => {
  authorize(ctx, "delete");
  const existing = await streamOf(ctx, provider, id);
  await inTransaction(ctx, (trx) => deleteStream(trx, existing.id));
  return { auditLogStream: toDto({ ...existing, pending: "0" }) };
};
