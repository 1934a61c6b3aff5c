import { inTransaction } from "../../db/transaction";
import { parseDuration, type SshKeyAlgorithmName } from "@keyward/contract";
import { noteAudit, type RequestContext } from "../../context";
import { isUniqueViolation } from "../../db/errors";
import { BadRequestError } from "../../errors";
import { toIso } from "../../lib/dates";
import { assertCan } from "../authz/guard";
import { requireCertificate, requireTemplate, sshProject } from "./ssh-access";
import { activeSigningKey, type SigningKey } from "./ssh-ca.service";
import { insertCertificate, listProjectCertificates, revokeCertificateRow } from "./ssh-cert.repository";
import { checkPrincipals, keyIdFor } from "./ssh-principals";
import {
  SshKeyError,
  generateSshKeyPairAsync,
  opensshPrivateKey,
  parsePublicKeyLine,
  randomSerial,
  signCertificate,
  type SshPublicKey,
} from "./wire";

/** Validity starts this long before signing: hosts' clocks drift. */
const BACKDATE_MS = 60_000;
const SERIAL_ATTEMPTS = 3;

type Subject = SshPublicKey;

/** What one signature needs: which CA, for whom, and what to record. */
export type SignRequest = {
  ca: SigningKey;
  projectId: string;
  subject: Subject;
  certType: "user" | "host";
  principals: string[];
  keyId: string;
  ttlMs: number;
  templateId: string | null;
  hostId: string | null;
  audit: (serialNumber: string, certificateId: string) => Record<string, unknown>;
};

/**
 * Records the certificate (its serial unique per CA: a collision draws another) and signs it with the
 * CA's key, in the transaction that writes the audit event.
 */
export const signAndRecord = async (ctx: RequestContext, request: SignRequest) => {
  const now = ctx.deps.clock.now();
  const validAfter = new Date(Math.floor((now - BACKDATE_MS) / 1000) * 1000);
  const validBefore = new Date(Math.floor((now + request.ttlMs) / 1000) * 1000);
  for (let attempt = 1; ; attempt += 1) {
    const serial = randomSerial();
    try {
      return await inTransaction(ctx, async (trx) => {
        const { id } = await insertCertificate(trx, {
          ssh_ca_id: request.ca.id,
          project_id: request.projectId,
          ssh_certificate_template_id: request.templateId,
          ssh_host_id: request.hostId,
          serial_number: serial.toString(),
          cert_type: request.certType,
          principals: request.principals,
          key_id: request.keyId,
          not_before: validAfter,
          not_after: validBefore,
        });
        const signedKey = signCertificate({
          caPrivateKey: request.ca.privateKey,
          caPublicBlob: request.ca.publicBlob,
          subject: request.subject,
          serial,
          certType: request.certType,
          keyId: request.keyId,
          principals: request.principals,
          validAfter,
          validBefore,
        });
        noteAudit(ctx, { metadata: request.audit(serial.toString(), id) });
        return { serialNumber: serial.toString(), signedKey, certificateId: id };
      });
    } catch (error) {
      if (!isUniqueViolation(error) || attempt >= SERIAL_ATTEMPTS) throw error;
    }
  }
};

/** A public key line to sign: a 400 naming what is wrong with it otherwise. */
export const subjectOf = (publicKey: string): Subject => {
  try {
    return parsePublicKeyLine(publicKey);
  } catch (error) {
    if (error instanceof SshKeyError) throw new BadRequestError(`Failed to parse public key: ${error.message}`);
    throw error;
  }
};

type SignBody = {
  certificateTemplateId: string;
  certType: "user" | "host";
  principals: string[];
  ttl?: string;
  keyId?: string;
};

/** The template's checks, in order: rights, CA and template enabled, key id, type, principals, TTL. */
const prepare = async (ctx: RequestContext, body: SignBody) => {
  const { row: template, ability } = await requireTemplate(ctx, body.certificateTemplateId, "");
  assertCan(ability, "create", "ssh-certificates");
  const ca = await activeSigningKey(ctx, template.ssh_ca_id);
  if (template.status !== "active") throw new BadRequestError("SSH certificate template is disabled");
  const keyId = keyIdFor(body.keyId, template.allow_custom_key_ids, ctx.actor);
  const allowed = body.certType === "user" ? template.allow_user_certificates : template.allow_host_certificates;
  if (!allowed)
    throw new BadRequestError(`Failed to validate ${body.certType} certificate type due to template restriction`);
  const principals = body.principals.map((p) => p.trim());
  checkPrincipals(body.certType, principals, { users: template.allowed_users, hosts: template.allowed_hosts });
  const ttlMs = parseDuration(body.ttl ?? template.ttl)!;
  if (ttlMs < 1000) throw new BadRequestError("TTL must be at least one second");
  if (ttlMs > parseDuration(template.max_ttl)!)
    throw new BadRequestError("Failed TTL validation due to TTL being greater than configured max TTL on template");
  return { template, ca, principals, keyId, ttlMs };
};

const auditOf = (body: SignBody, p: { keyId: string; principals: string[]; ttlMs: number }) => ({
  certificateTemplateId: body.certificateTemplateId,
  certType: body.certType,
  principals: p.principals,
  ttl: String(Math.floor(p.ttlMs / 1000)),
  keyId: p.keyId,
});

/** A template's signature for a subject key, its audit event naming what was asked and the serial. */
const signForTemplate = (
  ctx: RequestContext,
  body: SignBody,
  p: Awaited<ReturnType<typeof prepare>>,
  subject: Subject,
  extraAudit: Record<string, unknown> = {},
) =>
  signAndRecord(ctx, {
    ca: p.ca,
    projectId: p.template.project_id,
    subject,
    certType: body.certType,
    principals: p.principals,
    keyId: p.keyId,
    ttlMs: p.ttlMs,
    templateId: p.template.id,
    hostId: null,
    audit: (serialNumber, certificateId) => ({ ...auditOf(body, p), ...extraAudit, serialNumber, certificateId }),
  });

/** POST /api/v1/ssh/certificates/sign */
export const signSshKey = async (ctx: RequestContext, body: SignBody & { publicKey: string }) => {
  const p = await prepare(ctx, body);
  return signForTemplate(ctx, body, p, subjectOf(body.publicKey));
};

/** POST /api/v1/ssh/certificates/issue: a fresh key pair, answered once and never stored. */
export const issueSshCredentials = async (
  ctx: RequestContext,
  body: SignBody & { keyAlgorithm: SshKeyAlgorithmName },
) => {
  const p = await prepare(ctx, body);
  const pair = await generateSshKeyPairAsync(body.keyAlgorithm);
  const signed = await signForTemplate(ctx, body, p, parsePublicKeyLine(pair.publicKeyLine), {
    keyAlgorithm: body.keyAlgorithm,
  });
  return {
    ...signed,
    privateKey: opensshPrivateKey(pair.privateKey, p.keyId),
    publicKey: pair.publicKeyLine,
    keyAlgorithm: body.keyAlgorithm,
  };
};

/** POST /api/v1/ssh/certificates/:certificateId/revoke */
export const revokeSshCertificate = async (ctx: RequestContext, id: string, reason?: string) => {
  const { row } = await requireCertificate(ctx, id, "delete");
  const revoked = await inTransaction(ctx, async (trx) => {
    const done = await revokeCertificateRow(trx, row.id, reason ?? null);
    if (!done) throw new BadRequestError("The certificate is already revoked");
    noteAudit(ctx, {
      metadata: {
        sshCertificateId: row.id,
        sshCaId: row.ssh_ca_id,
        serialNumber: row.serial_number,
        ...(reason ? { reason } : {}),
      },
    });
    return done;
  });
  return {
    message: "Successfully revoked SSH certificate",
    serialNumber: String(row.serial_number),
    revokedAt: toIso(revoked.revoked_at!),
  };
};

/** GET /api/v1/projects/:projectId/ssh-certificates */
export const listSshCertificates = async (
  ctx: RequestContext,
  projectId: string,
  page: { offset: number; limit: number },
) => {
  const { ability, project } = await sshProject(ctx, projectId);
  assertCan(ability, "read", "ssh-certificates");
  const { rows, totalCount } = await listProjectCertificates(ctx.deps.db, project.id, page.offset, page.limit);
  return {
    certificates: rows.map((r) => ({
      id: r.id,
      sshCaId: r.ssh_ca_id,
      sshCertificateTemplateId: r.ssh_certificate_template_id,
      sshHostId: r.ssh_host_id,
      serialNumber: String(r.serial_number),
      certType: r.cert_type as "user" | "host",
      principals: r.principals,
      keyId: r.key_id,
      notBefore: toIso(r.not_before),
      notAfter: toIso(r.not_after),
      status: r.revoked_at ? ("revoked" as const) : ("active" as const),
      revokedAt: toIso(r.revoked_at),
    })),
    totalCount,
  };
};
