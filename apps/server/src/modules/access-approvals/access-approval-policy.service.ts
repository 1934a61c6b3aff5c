import { randomInt } from "node:crypto";
import type { AccessApprovalPolicy, AccessApprovalPrincipalInput } from "@keyward/contract";
import { noteAudit, type RequestContext } from "../../context";
import { isUniqueViolation, isUuid } from "../../db/errors";
import { inTransaction } from "../../db/transaction";
import { toIso } from "../../lib/dates";
import { BadRequestError, NotFoundError } from "../../errors";
import { assertCan } from "../authz/guard";
import { bumpPermissionVersion } from "../authz/permission-version";
import { getProjectPermission, getProjectPermissionBySlug } from "../authz/project-access";
import { SECRET_MANAGER, lookupEnvironmentBySlug } from "../folders/folder.service";
import {
  findEnvironmentsBySlugs,
  findOrgUserIdsByUsernames,
  findPolicy,
  findProjectPrincipals,
  insertPolicy,
  listLivePolicies,
  listLivePoliciesOfEnv,
  listPolicyEnvironments,
  listPolicyPrincipals,
  listRequests,
  lockPolicy,
  setPolicyEnvironments,
  setPolicyPrincipals,
  updatePolicyRow,
  updateRequestRow,
  type PolicyRow,
  type PrincipalType,
} from "./access-approval.repository";
import { revokeGrantedPrivilege } from "./access-grants";

type Principal = { type: PrincipalType; id: string };

const policyNotFound = (id: string) => new NotFoundError(`Access approval policy with ID ${id} not found`);

/** The policy's approvers, bypassers and environments, for responses and reviews. */
export const loadPolicyDetails = async (ctx: Pick<RequestContext, "deps">, rows: readonly PolicyRow[]) => {
  const ids = rows.map((r) => r.id);
  const [envs, principals] = await Promise.all([
    listPolicyEnvironments(ctx.deps.db, ids),
    listPolicyPrincipals(ctx.deps.db, ids),
  ]);
  return new Map(
    rows.map((row) => {
      const mine = principals.filter((p) => p.policy_id === row.id);
      const asDto = (role: string) =>
        mine
          .filter((p) => p.role === role)
          .map((p) => ({
            type: p.principal_type as PrincipalType,
            id: (p.user_id ?? p.identity_id ?? p.group_id)!,
            name: p.username ?? p.identity_name ?? p.group_slug ?? null,
          }));
      return [
        row.id,
        {
          row,
          environments: envs
            .filter((e) => e.policy_id === row.id)
            .map((e) => ({ id: e.id, slug: e.slug, name: e.name })),
          approvers: asDto("approver"),
          bypassers: asDto("bypasser"),
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

/** People by id or username, groups and identities by id; each must be in the project. */
const resolvePrincipals = async (
  ctx: RequestContext,
  projectId: string,
  inputs: readonly AccessApprovalPrincipalInput[],
  what: "Approver" | "Bypasser",
): Promise<Principal[]> => {
  const usernames = inputs.flatMap((p) => (p.type === "user" && p.id === undefined && p.username ? [p.username] : []));
  const byName = new Map(
    (await findOrgUserIdsByUsernames(ctx.deps.db, ctx.actor.orgId, usernames)).map((u) => [u.username, u.id]),
  );
  const seen = new Set<string>();
  const principals: Principal[] = [];
  for (const input of inputs) {
    let id = input.id;
    if (input.type === "user" && id === undefined) {
      id = byName.get(input.username!);
      if (!id) throw new BadRequestError(`${what} user ${input.username} is not a member of the organization`);
    }
    const key = `${input.type}:${id!}`;
    if (seen.has(key)) continue;
    seen.add(key);
    principals.push({ type: input.type, id: id! });
  }
  const ids = (type: PrincipalType) => principals.filter((p) => p.type === type).map((p) => p.id);
  const members = await findProjectPrincipals(ctx.deps.db, projectId, {
    user: ids("user"),
    identity: ids("identity"),
    group: ids("group"),
  });
  const outsiders = principals.filter((p) => !members[p.type].has(p.id));
  if (outsiders.length > 0)
    throw new BadRequestError(
      `${what}s must be members of the project: ${outsiders.map((p) => `${p.type} ${p.id}`).join(", ")} ${
        outsiders.length === 1 ? "is" : "are"
      } not`,
    );
  return principals;
};

const assertApprovalCount = (approvers: readonly Principal[], approvals: number) => {
  // A group may hold any number of people, so a policy with a group approver is not counted.
  if (approvers.some((p) => p.type === "group")) return;
  if (approvals > approvers.length)
    throw new BadRequestError("The number of approvals should be lower than the number of approvers.");
};

const resolveEnvironments = async (ctx: RequestContext, projectId: string, slugs: readonly string[]) => {
  const unique = [...new Set(slugs)];
  const found = await findEnvironmentsBySlugs(ctx.deps.db, projectId, unique);
  const missing = unique.filter((slug) => !found.some((e) => e.slug === slug));
  if (missing.length > 0) throw new NotFoundError(`Environment with slug ${missing.join(", ")} not found`);
  return unique.map((slug) => found.find((e) => e.slug === slug)!);
};

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
  const approvers = await resolvePrincipals(ctx, project.id, body.approvers, "Approver");
  const bypassers = await resolvePrincipals(ctx, project.id, body.bypassers ?? [], "Bypasser");
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
      await setPolicyEnvironments(
        trx,
        row.id,
        envs.map((e) => e.id),
      );
      await setPolicyPrincipals(trx, row.id, "approver", approvers);
      await setPolicyPrincipals(trx, row.id, "bypasser", bypassers);
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
  const approvers = body.approvers ? await resolvePrincipals(ctx, projectId, body.approvers, "Approver") : undefined;
  const bypassers = body.bypassers ? await resolvePrincipals(ctx, projectId, body.bypassers, "Bypasser") : undefined;
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
        await setPolicyEnvironments(
          trx,
          id,
          envs.map((e) => e.id),
        );
      if (approvers) await setPolicyPrincipals(trx, id, "approver", approvers);
      if (bypassers) await setPolicyPrincipals(trx, id, "bypasser", bypassers);
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
