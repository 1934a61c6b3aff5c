import { createPrivateKey } from "node:crypto";
import { randomUUID } from "node:crypto";
import { inTransaction, type Tx } from "../../db/transaction";
import type { SshKeyAlgorithmName } from "@keyward/contract";
import { noteAudit, type PublicContext, type RequestContext } from "../../context";
import { isRestrictViolation, isUuid } from "../../db/errors";
import { BadRequestError, NotFoundError } from "../../errors";
import { toIso } from "../../lib/dates";
import { assertCan } from "../authz/guard";
import { requireCa, sshProject } from "./ssh-access";
import {
  deleteCaRow,
  findCa,
  findCaSigningKey,
  findHost,
  insertCa,
  listProjectCas,
  listTemplates,
  updateCaRow,
  type CaRow,
} from "./ssh-ca.repository";
import { listRevokedSerials } from "./ssh-cert.repository";
import { templateDto } from "./ssh-template.service";
import { buildKrl, generateSshKeyPairAsync } from "./wire";

const aadOf = (caId: string) => `ssh-ca:${caId}`;
const missingCa = (id: string) => new NotFoundError(`SSH CA with ID '${id}' not found`);

export const caDto = (row: Omit<CaRow, "public_key"> & { public_key?: string }) => ({
  id: row.id,
  projectId: row.project_id,
  friendlyName: row.friendly_name,
  status: row.status as "active" | "disabled",
  keyAlgorithm: row.key_algorithm as SshKeyAlgorithmName,
  keySource: row.key_source as "internal" | "external",
  createdAt: toIso(row.created_at),
  updatedAt: toIso(row.updated_at),
});

const withKey = (row: CaRow) => ({ ...caDto(row), publicKey: row.public_key });

/** Generates a CA key pair and stores it, the private key sealed under the root key. */
export const createCaRow = async (
  ctx: Pick<RequestContext, "deps">,
  trx: Tx,
  projectId: string,
  friendlyName: string,
  algorithm: SshKeyAlgorithmName,
) => {
  const id = randomUUID();
  const pair = await generateSshKeyPairAsync(algorithm);
  const pem = pair.privateKey.export({ type: "pkcs8", format: "pem" }).toString();
  await insertCa(trx, {
    id,
    project_id: projectId,
    friendly_name: friendlyName,
    key_algorithm: algorithm,
    public_key: pair.publicKeyLine,
    encrypted_private_key: ctx.deps.secretBox.encrypt(pem, aadOf(id)),
  });
  return id;
};

/** An active CA's keys, the private one opened for this request only; 400 when the CA is disabled. */
export const activeSigningKey = async (ctx: Pick<RequestContext, "deps">, caId: string) => {
  const row = await findCaSigningKey(ctx.deps.db, caId);
  if (!row) throw missingCa(caId);
  if (row.status !== "active") throw new BadRequestError("SSH CA is disabled");
  return {
    id: row.id,
    privateKey: createPrivateKey(ctx.deps.secretBox.decrypt(row.encrypted_private_key, aadOf(caId))),
    publicBlob: Buffer.from(row.public_key.split(" ")[1]!, "base64"),
  };
};

export type SigningKey = Awaited<ReturnType<typeof activeSigningKey>>;

const auditCa = (ctx: RequestContext, row: { id: string; friendly_name: string }, extra: object = {}) =>
  noteAudit(ctx, { metadata: { sshCaId: row.id, friendlyName: row.friendly_name, ...extra } });

export const createSshCa = async (
  ctx: RequestContext,
  body: { projectId: string; friendlyName: string; keyAlgorithm: SshKeyAlgorithmName },
) => {
  const { ability, project } = await sshProject(ctx, body.projectId);
  assertCan(ability, "create", "ssh-certificate-authorities");
  const id = await inTransaction(ctx, async (trx) => {
    const created = await createCaRow(ctx, trx, project.id, body.friendlyName, body.keyAlgorithm);
    auditCa(ctx, { id: created, friendly_name: body.friendlyName });
    return created;
  });
  return { ca: withKey((await findCa(ctx.deps.db, id))!) };
};

export const getSshCa = async (ctx: RequestContext, id: string) => {
  const { row } = await requireCa(ctx, id, "read");
  auditCa(ctx, row);
  return { ca: withKey(row) };
};

export const updateSshCa = async (
  ctx: RequestContext,
  id: string,
  body: { friendlyName?: string; status?: "active" | "disabled" },
) => {
  const { row } = await requireCa(ctx, id, "edit");
  await inTransaction(ctx, async (trx) => {
    await updateCaRow(trx, row.id, { friendly_name: body.friendlyName, status: body.status });
    auditCa(
      ctx,
      { id: row.id, friendly_name: body.friendlyName ?? row.friendly_name },
      body.status ? { status: body.status } : {},
    );
  });
  return { ca: withKey((await findCa(ctx.deps.db, row.id))!) };
};

export const deleteSshCa = async (ctx: RequestContext, id: string) => {
  const { row } = await requireCa(ctx, id, "delete");
  await inTransaction(ctx, async (trx) => {
    await deleteCaRow(trx, row.id);
    auditCa(ctx, row);
  }).catch((error: unknown) => {
    if (isRestrictViolation(error))
      throw new BadRequestError("The SSH CA signs for hosts: change or remove them first");
    throw error;
  });
  return { ca: caDto(row) };
};

export const listCaTemplates = async (ctx: RequestContext, id: string) => {
  const { row, ability } = await requireCa(ctx, id, "read");
  assertCan(ability, "read", "ssh-certificate-templates");
  auditCa(ctx, row);
  return { certificateTemplates: (await listTemplates(ctx.deps.db, { caId: row.id })).map(templateDto) };
};

export const listSshCas = async (ctx: RequestContext, projectId: string) => {
  const { ability, project } = await sshProject(ctx, projectId);
  assertCan(ability, "read", "ssh-certificate-authorities");
  return { cas: (await listProjectCas(ctx.deps.db, project.id)).map(caDto) };
};

/** The bare public key line of a CA (no authentication: what hosts and clients trust). */
export const sshCaPublicKey = async (ctx: PublicContext, id: string) => {
  const row = isUuid(id) ? await findCa(ctx.deps.db, id) : undefined;
  if (!row) throw missingCa(id);
  return `${row.public_key}\n`;
};

/** The public key line of a host's user or host CA (no authentication). */
export const hostCaPublicKey = async (ctx: PublicContext, hostId: string, which: "user" | "host") => {
  const host = isUuid(hostId) ? await findHost(ctx.deps.db, hostId) : undefined;
  if (!host) throw new NotFoundError(`SSH host with ID ${hostId} not found`);
  return sshCaPublicKey(ctx, which === "user" ? host.user_ssh_ca_id : host.host_ssh_ca_id);
};

/** The CA's revocation list as sshd's RevokedKeys reads it, with its version for caching. */
export const sshCaKrl = async (ctx: PublicContext, id: string) => {
  const row = isUuid(id) ? await findCa(ctx.deps.db, id) : undefined;
  if (!row) throw missingCa(id);
  const serials = await listRevokedSerials(ctx.deps.db, row.id);
  const caBlob = Buffer.from(row.public_key.split(" ")[1]!, "base64");
  const krl = buildKrl({
    caPublicBlob: caBlob,
    serials,
    krlVersion: BigInt(row.krl_version),
    generatedAt: new Date(ctx.deps.clock.now()),
    comment: `keyward ${row.id}`,
  });
  return { krl, version: row.krl_version };
};
