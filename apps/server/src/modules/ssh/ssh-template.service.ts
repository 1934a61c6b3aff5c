import { inTransaction } from "../../db/transaction";
import { parseDuration } from "@keyward/contract";
import { noteAudit, type RequestContext } from "../../context";
import { isUniqueViolation } from "../../db/errors";
import { BadRequestError } from "../../errors";
import { assertCan } from "../authz/guard";
import { requireCa, requireTemplate, sshProject } from "./ssh-access";
import {
  deleteTemplateRow,
  findTemplate,
  insertTemplate,
  listTemplates,
  updateTemplateRow,
  type TemplateRow,
} from "./ssh-ca.repository";

type TemplateFields = {
  name: string;
  ttl: string;
  maxTTL: string;
  allowedUsers: string[];
  allowedHosts: string[];
  allowUserCertificates: boolean;
  allowHostCertificates: boolean;
  allowCustomKeyIds: boolean;
};

export const templateDto = (row: Omit<TemplateRow, "org_id" | "project_id">) => ({
  id: row.id,
  sshCaId: row.ssh_ca_id,
  status: row.status as "active" | "disabled",
  name: row.name,
  ttl: row.ttl,
  maxTTL: row.max_ttl,
  allowedUsers: row.allowed_users,
  allowedHosts: row.allowed_hosts,
  allowUserCertificates: row.allow_user_certificates,
  allowHostCertificates: row.allow_host_certificates,
  allowCustomKeyIds: row.allow_custom_key_ids,
});

const assertTtls = (ttl: string, maxTTL: string) => {
  if (parseDuration(ttl)! > parseDuration(maxTTL)!) throw new BadRequestError("TTL cannot be greater than max TTL");
};

const nameTaken = (name: string) => (error: unknown) => {
  if (isUniqueViolation(error)) throw new BadRequestError(`SSH certificate template with name ${name} already exists`);
  throw error;
};

const columnsOf = (f: Partial<TemplateFields>) => ({
  ...(f.name !== undefined ? { name: f.name } : {}),
  ...(f.ttl !== undefined ? { ttl: f.ttl } : {}),
  ...(f.maxTTL !== undefined ? { max_ttl: f.maxTTL } : {}),
  ...(f.allowedUsers !== undefined ? { allowed_users: [...new Set(f.allowedUsers)] } : {}),
  ...(f.allowedHosts !== undefined ? { allowed_hosts: [...new Set(f.allowedHosts)] } : {}),
  ...(f.allowUserCertificates !== undefined ? { allow_user_certificates: f.allowUserCertificates } : {}),
  ...(f.allowHostCertificates !== undefined ? { allow_host_certificates: f.allowHostCertificates } : {}),
  ...(f.allowCustomKeyIds !== undefined ? { allow_custom_key_ids: f.allowCustomKeyIds } : {}),
});

export const createSshTemplate = async (ctx: RequestContext, body: TemplateFields & { sshCaId: string }) => {
  const { row: ca, ability } = await requireCa(ctx, body.sshCaId, "");
  assertCan(ability, "create", "ssh-certificate-templates");
  assertTtls(body.ttl, body.maxTTL);
  const id = await inTransaction(ctx, async (trx) => {
    const created = await insertTemplate(trx, {
      ...(columnsOf(body) as Required<ReturnType<typeof columnsOf>>),
      ssh_ca_id: ca.id,
      project_id: ca.project_id,
    });
    noteAudit(ctx, { metadata: { ...body, certificateTemplateId: created.id, sshCaId: ca.id } });
    return created.id;
  }).catch(nameTaken(body.name));
  return templateDto((await findTemplate(ctx.deps.db, id))!);
};

export const getSshTemplate = async (ctx: RequestContext, id: string) => {
  const { row } = await requireTemplate(ctx, id, "read");
  noteAudit(ctx, { metadata: { certificateTemplateId: row.id } });
  return templateDto(row);
};

export const updateSshTemplate = async (
  ctx: RequestContext,
  id: string,
  body: Partial<TemplateFields> & { status?: "active" | "disabled" },
) => {
  const { row } = await requireTemplate(ctx, id, "edit");
  assertTtls(body.ttl ?? row.ttl, body.maxTTL ?? row.max_ttl);
  await inTransaction(ctx, async (trx) => {
    await updateTemplateRow(trx, row.id, { ...columnsOf(body), ...(body.status ? { status: body.status } : {}) });
    noteAudit(ctx, { metadata: { certificateTemplateId: row.id, ...body } });
  }).catch(nameTaken(body.name ?? row.name));
  return templateDto((await findTemplate(ctx.deps.db, row.id))!);
};

export const deleteSshTemplate = async (ctx: RequestContext, id: string) => {
  const { row } = await requireTemplate(ctx, id, "delete");
  await inTransaction(ctx, async (trx) => {
    await deleteTemplateRow(trx, row.id);
    noteAudit(ctx, { metadata: { certificateTemplateId: row.id } });
  });
  return templateDto(row);
};

export const listSshTemplates = async (ctx: RequestContext, projectId: string) => {
  const { ability, project } = await sshProject(ctx, projectId);
  assertCan(ability, "read", "ssh-certificate-templates");
  return { certificateTemplates: (await listTemplates(ctx.deps.db, { projectId: project.id })).map(templateDto) };
};
