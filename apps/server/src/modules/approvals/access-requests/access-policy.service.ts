import { randomInt } from "node:crypto";
import type { AccessApprovalPolicy, AccessApprovalPrincipalInput } from "@keyward/contract";
import { noteAudit, type RequestContext } from "../../../context";
import { isUniqueViolation, isUuid } from "../../../db/errors";
import { inTransaction } from "../../../db/transaction";
import { toIso } from "../../../lib/dates";
import { BadRequestError, NotFoundError } from "../../../errors";
import { assertCan } from "../../authz/guard";
import { bumpPermissionVersion } from "../../authz/permission-version";
import { getProjectPermission, getProjectPermissionBySlug } from "../../authz/project-access";
import { SECRET_MANAGER, lookupEnvironmentBySlug } from "../../folders/folder.service";
import {
  findPolicy,
  insertPolicy,
  listLivePolicies,
  listLivePoliciesOfEnv,
  listRequests,
  lockPolicy,
  updatePolicyRow,
  updateRequestRow,
  type PolicyRow,
} from "./access-request.repository";
import {
  listPolicyEnvironments,
  replacePolicyEnvironments,
  replacePolicyPrincipals,
} from "../approval-policy.repository";
import {
  assertApprovalsReachable,
  principalsOfPolicies,
  resolveEnvironments as resolveEnvs,
  resolvePrincipals as resolveNamed,
  type NamedPrincipal,
  type PrincipalRole,
} from "../approval-policy";
import type { PrincipalRef } from "../../authz/principals";
import { revokeGrantedPrivilege } from "./access-grants";

const policyNotFound = (id: string) => new NotFoundError(`Access approval policy with ID ${id} not found`);

/** The policy's approvers, bypassers and environments, for responses and reviews. */
export const loadPolicyDetails = async (ctx: Pick<RequestContext, "deps">, rows: readonly PolicyRow[]) => {
  const ids = rows.map((r) => r.id);
  const [envs, principals] = await Promise.all([
    listPolicyEnvironments(ctx.deps.db, "access", ids),
    principalsOfPolicies(ctx.deps.db, "access", ids),
  ]);
  // A person is shown by username, an identity by name, a group by slug.
  const asDto = (named: readonly NamedPrincipal[]) =>
    named.map((p) => ({ type: p.type, id: p.id, name: p.slug ?? p.name ?? null }));
  return new Map(
    rows.map((row) => {
      const { approvers, bypassers } = principals.get(row.id)!;
      return [
        row.id,
        {
          row,
          environments: envs
            .filter((e) => e.policy_id === row.id)
            .map((e) => ({ id: e.id, slug: e.slug, name: e.name })),
          approvers: asDto(approvers),
          bypassers: asDto(bypassers),
        },
      ];
    }),
  );
};
export type PolicyDetails = NonNullable<ReturnType<Awaited<ReturnType<typeof loadPolicyDetails>>["get"]>>;

export const toPolicyDto = ({ row, environments, approvers, bypassers }: PolicyDetails): AccessApprovalPolicy => ({
  id: row.id,
  name: row.name,
  projectId: row.project_id,
  secretPath: row.secret_path,
  approvals: row.approvals,
  enforcementLevel: row.enforcement_level as "hard" | "soft",
  allowedSelfApprovals: row.allowed_self_approvals,
  maxTimePeriod: row.max_time_period,
  requestExpirationTime: row.request_expiration_time,
  envId: environments[0]?.id ?? null,
  environment: environments[0] ?? null,
  environments,
  approvers,
  bypassers,
  deletedAt: toIso(row.deleted_at),
  createdAt: toIso(row.created_at),
  updatedAt: toIso(row.updated_at),
});

const dtoOf = async (ctx: RequestContext, row: PolicyRow) =>
  toPolicyDto((await loadPolicyDetails(ctx, [row])).get(row.id)!);

/** Policies are in secret-manager projects; another organization's, or an archived one, is not found. */
const requirePolicy = async (ctx: RequestContext, id: string) => {
  const found = isUuid(id) ? await findPolicy(ctx.deps.db, id) : undefined;
  if (!found || found.org_id !== ctx.actor.orgId || found.deleted_at !== null) throw policyNotFound(id);
  const { org_id: _org, ...row } = found;
  const permission = await getProjectPermission(ctx, row.project_id, SECRET_MANAGER).catch((error: unknown) => {
    throw error instanceof NotFoundError ? policyNotFound(id) : error;
  });
  return { row, permission };
};

/** People by id, username or e-mail, groups and identities by id; each must be in the project. */
const resolvePrincipals = (
  ctx: RequestContext,
  projectId: string,
  inputs: readonly AccessApprovalPrincipalInput[],
  role: PrincipalRole,
) => {
  const what = role === "approver" ? "Approver" : "Bypasser";
  return resolveNamed(ctx, projectId, role, inputs, {
    unknownUser: (username) => `${what} user ${username} is not a member of the organization`,
    outsiders: (outsiders) =>
      `${what}s must be members of the project: ${outsiders.map((p) => `${p.type} ${p.id}`).join(", ")} ${
        outsiders.length === 1 ? "is" : "are"
      } not`,
  });
};

const assertApprovalCount = (approvers: readonly PrincipalRef[], approvals: number) =>
  assertApprovalsReachable(
    approvals,
    approvers,
    "The number of approvals should be lower than the number of approvers.",
  );

const resolveEnvironments = (ctx: RequestContext, projectId: string, slugs: readonly string[]) =>
  resolveEnvs(ctx.deps.db, projectId, slugs, (missing) => `Environment with slug ${missing.join(", ")} not found`);

const NAME_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789";
const defaultName = (envSlug: string) =>
  `${envSlug}-${Array.from({ length: 3 }, () => NAME_ALPHABET[randomInt(NAME_ALPHABET.length)]).join("")}`;

const nameTaken = (name: string) => new BadRequestError(`An access approval policy named ${name} already exists`);

export type CreatePolicyBody = {
  projectSlug: string;
  name?: string;
  environment?: string;
  environments?: string[];
  secretPath: string;
  approvers: AccessApprovalPrincipalInput[];
  approvals: number;
  enforcementLevel: "hard" | "soft";
  allowedSelfApprovals: boolean;
  bypassers?: AccessApprovalPrincipalInput[];
  maxTimePeriod?: string | null;
  requestExpirationTime?: string | null;
};

export const createAccessApprovalPolicy = async (ctx: RequestContext, body: CreatePolicyBody) => {
  const { project, ability } = await getProjectPermissionBySlug(ctx, body.projectSlug, SECRET_MANAGER);
  assertCan(ability, "create", "secret-approval");
  const envs = await resolveEnvironments(ctx, project.id, body.environments ?? [body.environment!]);
  const approvers = await resolvePrincipals(ctx, project.id, body.approvers, "approver");
  const bypassers = await resolvePrincipals(ctx, project.id, body.bypassers ?? [], "bypasser");
  assertApprovalCount(approvers, body.approvals);
  const name = body.name ?? defaultName(envs[0]!.slug);
  try {
    const row = await inTransaction(ctx, async (trx) => {
      const row = await insertPolicy(trx, {
        project_id: project.id,
        name,
        secret_path: body.secretPath,
        approvals: body.approvals,
        enforcement_level: body.enforcementLevel,
        allowed_self_approvals: body.allowedSelfApprovals,
        max_time_period: body.maxTimePeriod ?? null,
        request_expiration_time: body.requestExpirationTime ?? null,
      });
      await replacePolicyEnvironments(
        trx,
        "access",
        row.id,
        envs.map((e) => e.id),
      );
      await replacePolicyPrincipals(trx, "access", row.id, ["approver", "bypasser"], [...approvers, ...bypassers]);
      noteAudit(ctx, {
        metadata: {
          policyId: row.id,
          name,
          environments: envs.map((e) => e.slug),
          secretPath: body.secretPath,
          approvals: body.approvals,
        },
      });
      return row;
    });
    return dtoOf(ctx, row);
  } catch (error) {
    if (isUniqueViolation(error)) throw nameTaken(name);
    throw error;
  }
};

export const listAccessApprovalPolicies = async (ctx: RequestContext, projectSlug: string) => {
  const { project, ability } = await getProjectPermissionBySlug(ctx, projectSlug, SECRET_MANAGER);
  assertCan(ability, "read", "secret-approval");
  const rows = await listLivePolicies(ctx.deps.db, project.id);
  const details = await loadPolicyDetails(ctx, rows);
  return rows.map((row) => toPolicyDto(details.get(row.id)!));
};

export const countAccessApprovalPolicies = async (ctx: RequestContext, projectSlug: string, envSlug: string) => {
  const { project, ability } = await getProjectPermissionBySlug(ctx, projectSlug, SECRET_MANAGER);
  assertCan(ability, "read", "secret-approval");
  const env = await lookupEnvironmentBySlug(ctx.deps.db, project.id, envSlug);
  if (!env) throw new NotFoundError(`Environment with slug ${envSlug} not found`);
  return (await listLivePoliciesOfEnv(ctx.deps.db, project.id, env.id)).length;
};

export const getAccessApprovalPolicy = async (ctx: RequestContext, id: string) => {
  const { row, permission } = await requirePolicy(ctx, id);
  assertCan(permission.ability, "read", "secret-approval");
  return dtoOf(ctx, row);
};

export type UpdatePolicyBody = Partial<Omit<CreatePolicyBody, "projectSlug">>;

export const updateAccessApprovalPolicy = async (ctx: RequestContext, id: string, body: UpdatePolicyBody) => {
  const { row, permission } = await requirePolicy(ctx, id);
  assertCan(permission.ability, "edit", "secret-approval");
  const projectId = row.project_id;
  const slugs = body.environments ?? (body.environment !== undefined ? [body.environment] : undefined);
  const envs = slugs ? await resolveEnvironments(ctx, projectId, slugs) : undefined;
  const approvers = body.approvers ? await resolvePrincipals(ctx, projectId, body.approvers, "approver") : undefined;
  const bypassers = body.bypassers ? await resolvePrincipals(ctx, projectId, body.bypassers, "bypasser") : undefined;
  const current = (await loadPolicyDetails(ctx, [row])).get(row.id)!;
  assertApprovalCount(approvers ?? current.approvers, body.approvals ?? row.approvals);
  try {
    const updated = await inTransaction(ctx, async (trx) => {
      const locked = await lockPolicy(trx, id);
      if (!locked || locked.deleted_at !== null) throw policyNotFound(id);
      const updated = await updatePolicyRow(trx, id, {
        ...(body.name !== undefined ? { name: body.name } : {}),
        ...(body.secretPath !== undefined ? { secret_path: body.secretPath } : {}),
        ...(body.approvals !== undefined ? { approvals: body.approvals } : {}),
        ...(body.enforcementLevel !== undefined ? { enforcement_level: body.enforcementLevel } : {}),
        ...(body.allowedSelfApprovals !== undefined ? { allowed_self_approvals: body.allowedSelfApprovals } : {}),
        ...(body.maxTimePeriod !== undefined ? { max_time_period: body.maxTimePeriod } : {}),
        ...(body.requestExpirationTime !== undefined ? { request_expiration_time: body.requestExpirationTime } : {}),
      });
      if (envs)
        await replacePolicyEnvironments(
          trx,
          "access",
          id,
          envs.map((e) => e.id),
        );
      if (approvers) await replacePolicyPrincipals(trx, "access", id, ["approver"], approvers);
      if (bypassers) await replacePolicyPrincipals(trx, "access", id, ["bypasser"], bypassers);
      noteAudit(ctx, { metadata: { policyId: id, name: updated.name } });
      return updated;
    });
    return dtoOf(ctx, updated);
  } catch (error) {
    if (isUniqueViolation(error)) throw nameTaken(body.name ?? row.name);
    throw error;
  }
};

/**
 * Deleting archives: the row stays for its requests. Pending requests can no longer be reviewed;
 * approved ones are revoked, their privileges removed at once.
 */
export const deleteAccessApprovalPolicy = async (ctx: RequestContext, id: string) => {
  const { row, permission } = await requirePolicy(ctx, id);
  assertCan(permission.ability, "delete", "secret-approval");
  const archived = await inTransaction(ctx, async (trx) => {
    // The project row first: the revocations change abilities.
    await bumpPermissionVersion(trx, [row.project_id]);
    const locked = await lockPolicy(trx, id);
    if (!locked || locked.deleted_at !== null) throw policyNotFound(id);
    const archived = await updatePolicyRow(trx, id, { deleted_at: new Date(ctx.deps.clock.now()) });
    const approved = await listRequests(trx, row.project_id, { policyId: id, status: "approved" });
    for (const request of approved) {
      await revokeGrantedPrivilege(trx, request);
      await updateRequestRow(trx, request.id, {
        status: "revoked",
        revoked_at: new Date(ctx.deps.clock.now()),
        revoked_by_user_id: ctx.actor.type === "user" ? ctx.actor.id : null,
        revoked_by_identity_id: ctx.actor.type === "identity" ? ctx.actor.id : null,
      });
    }
    noteAudit(ctx, { metadata: { policyId: id, name: row.name, revokedRequestIds: approved.map((r) => r.id) } });
    return archived;
  });
  return dtoOf(ctx, archived);
};
