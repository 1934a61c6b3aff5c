import type { RequestContext } from "../../context";
import { isUuid } from "../../db/errors";
import { NotFoundError } from "../../errors";
import type { PermissionObject } from "../../permissions";
import { assertCan } from "../authz/guard";
import { getProjectPermission } from "../authz/project-access";
import { findCa, findHost, findTemplate } from "./ssh-ca.repository";
import { findCertificate } from "./ssh-cert.repository";

/** The caller's ability in an SSH project (another type is the usual 400; another organization's a 404). */
export const sshProject = (ctx: RequestContext, projectId: string) => getProjectPermission(ctx, projectId, "ssh");

/**
 * An SSH object of the caller's organization with the caller's ability in its project, and the right
 * checked; another organization's object is the same 404 as a missing one.
 */
const owned = async <T extends { project_id: string; org_id: string }>(
  ctx: RequestContext,
  row: T | undefined,
  message: string,
  right: { action: string; subject: string; object?: (row: T) => PermissionObject },
) => {
  if (!row || row.org_id !== ctx.actor.orgId) throw new NotFoundError(message);
  const { ability, project } = await sshProject(ctx, row.project_id).catch((error: unknown) => {
    throw error instanceof NotFoundError ? new NotFoundError(message) : error;
  });
  if (right.action) assertCan(ability, right.action, right.subject, right.object?.(row));
  return { row, ability, project };
};

const find = <T>(id: string, lookup: (id: string) => Promise<T>) =>
  isUuid(id) ? lookup(id) : Promise.resolve(undefined);

/** An SSH CA; `action` on CAs checked unless empty (another subject's route checks its own right). */
export const requireCa = async (ctx: RequestContext, id: string, action: string) =>
  owned(ctx, await find(id, (i) => findCa(ctx.deps.db, i)), `SSH CA with ID '${id}' not found`, {
    action,
    subject: "ssh-certificate-authorities",
  });

export const requireTemplate = async (
  ctx: RequestContext,
  id: string,
  action: string,
  subject = "ssh-certificate-templates",
) =>
  owned(ctx, await find(id, (i) => findTemplate(ctx.deps.db, i)), `SSH certificate template with ID ${id} not found`, {
    action,
    subject,
  });

export const requireHost = async (ctx: RequestContext, id: string, action: string) =>
  owned(ctx, await find(id, (i) => findHost(ctx.deps.db, i)), `SSH host with ID ${id} not found`, {
    action,
    subject: "ssh-hosts",
    object: (row) => ({ hostname: row.hostname }),
  });

export const requireCertificate = async (ctx: RequestContext, id: string, action: string) =>
  owned(ctx, await find(id, (i) => findCertificate(ctx.deps.db, i)), `SSH certificate with ID ${id} not found`, {
    action,
    subject: "ssh-certificates",
  });
