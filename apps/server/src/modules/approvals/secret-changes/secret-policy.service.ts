import { randomBytes } from "node:crypto";
import type { ApprovalPrincipalInput, SecretApprovalPolicy } from "@keyward/contract";
import { noteAudit, type ActorContext, type RequestContext } from "../../../context";
import type { Database } from "../../../db/database";
import { isUuid } from "../../../db/errors";
import { inTransaction } from "../../../db/transaction";
import { BadRequestError, NotFoundError } from "../../../errors";
import { globMatches } from "../../../permissions/glob";
import { assertCan } from "../../authz/guard";
import { getProjectPermission } from "../../authz/project-access";
import { SECRET_MANAGER } from "../../folders/folder.service";
import type { PrincipalRef } from "../../authz/principals";
import {
  findPolicy,
  findPolicyWithScope,
  insertPolicy,
  listLivePolicies,
  listLivePoliciesOfEnvironment,
  lockPolicy,
  retirePolicyRow,
  updatePolicyRow,
  type PolicyRow,
} from "./secret-policy.repository";
import {
  listPolicyEnvironments,
  replacePolicyEnvironments,
  replacePolicyPrincipals,
} from "../approval-policy.repository";
import {
  assertApprovalsReachable as assertReachable,
  principalsOfPolicies,
  resolveEnvironments as resolveEnvs,
  resolvePrincipals as resolveNamed,
  type PrincipalRole,
} from "../approval-policy";
import { closeOpenRequestsOfPolicy } from "./change-request.repository";

const SUBJECT = "secret-approval";
const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());

/** A policy path as stored: trimmed, without a trailing slash (but `/` stays `/`). */
export const normalizePolicyPath = (path: string) => {
  const trimmed = path.trim();
  return trimmed.length > 1 ? trimmed.replace(/\/+$/, "") || "/" : trimmed;
};

/** The policies with their environments, approvers and bypassers, as the routes show them. */
export const toPolicyDtos = async (db: Database, rows: readonly PolicyRow[]): Promise<SecretApprovalPolicy[]> => {
  const ids = rows.map((r) => r.id);
  const [envs, principals] = await Promise.all([
    listPolicyEnvironments(db, "secret", ids),
    principalsOfPolicies(db, "secret", ids),
  ]);
  return rows.map((row) => {
    const environments = envs
      .filter((e) => e.policy_id === row.id)
      .map((e) => ({ id: e.id, slug: e.slug, name: e.name }));
    const { approvers, bypassers } = principals.get(row.id)!;
    const listed = (named: typeof approvers) => named.map(({ type, id, name }) => ({ type, id, name }));
    const first = environments[0] ?? { id: "", slug: "", name: "" };
    return {
      id: row.id,
      name: row.name,
      projectId: row.project_id,
      approvals: row.approvals,
      secretPath: row.secret_path,
      envId: first.id,
      environment: first,
      environments,
      enforcementLevel: row.enforcement_level as "hard" | "soft",
      allowedSelfApprovals: row.allowed_self_approvals,
      bypassForMachineIdentities: row.bypass_for_machine_identities,
      approvers: listed(approvers),
      bypassers: listed(bypassers),
      deletedAt: iso(row.deleted_at),
      createdAt: iso(row.created_at)!,
      updatedAt: iso(row.updated_at)!,
    };
  });
};

/** The project a query names (`workspaceId` is its older name). */
export const projectOf = (query: { projectId?: string; workspaceId?: string }) => {
  const id = query.projectId ?? query.workspaceId;
  if (id === undefined) throw new BadRequestError("projectId is required");
  return id;
};

/** A principal as stored, its user name resolved; each must be a member of the project. */
const resolvePrincipals = (
  ctx: RequestContext,
  projectId: string,
  role: PrincipalRole,
  inputs: readonly ApprovalPrincipalInput[],
) =>
  resolveNamed(ctx, projectId, role, inputs, {
    unknownUser: (username) => `Invalid ${role} user: ${username ?? "(none)"}`,
    outsiders: ([first]) => `Invalid ${role} ${first!.type}: ${first!.id} is not a member of the project`,
  });

const resolveEnvironments = (db: Database, projectId: string, slugs: readonly string[]) =>
  resolveEnvs(db, projectId, slugs, (missing) => `One or more environments not found: ${missing.join(", ")}`);

const assertApprovalsReachable = (approvals: number, approvers: readonly PrincipalRef[]) =>
  assertReachable(approvals, approvers, "Approvals cannot be greater than approvers");

const assertScopeFree = async (
  db: Database,
  projectId: string,
  envs: readonly { id: string; slug: string }[],
  secretPath: string,
  exceptId?: string,
) => {
  const clash = await findPolicyWithScope(
    db,
    projectId,
    envs.map((e) => e.id),
    secretPath,
    exceptId,
  );
  if (clash)
    throw new BadRequestError(`A policy for secret path '${secretPath}' already exists in environment '${clash.slug}'`);
};

type PolicyInput = {
  projectId?: string;
  workspaceId?: string;
  name?: string;
  secretPath: string;
  approvers: ApprovalPrincipalInput[];
  bypassers?: ApprovalPrincipalInput[];
  approvals: number;
  enforcementLevel: "hard" | "soft";
  allowedSelfApprovals: boolean;
  bypassForMachineIdentities: boolean;
  environment?: string;
  environments?: string[];
};

export const createApprovalPolicy = async (ctx: RequestContext, body: PolicyInput) => {
  const { project, ability } = await getProjectPermission(ctx, projectOf(body), SECRET_MANAGER);
  assertCan(ability, "create", SUBJECT);
  const envs = await resolveEnvironments(ctx.deps.db, project.id, body.environments ?? [body.environment!]);
  const approvers = await resolvePrincipals(ctx, project.id, "approver", body.approvers);
  const bypassers = await resolvePrincipals(ctx, project.id, "bypasser", body.bypassers ?? []);
  assertApprovalsReachable(body.approvals, approvers);
  const secretPath = normalizePolicyPath(body.secretPath);
  const row = await inTransaction(ctx, async (trx) => {
    await assertScopeFree(trx, project.id, envs, secretPath);
    const policy = await insertPolicy(trx, project.id, {
      name: body.name ?? `${envs.map((e) => e.slug).join(",")}-${randomBytes(2).toString("hex").slice(0, 3)}`,
      secret_path: secretPath,
      approvals: body.approvals,
      enforcement_level: body.enforcementLevel,
      allowed_self_approvals: body.allowedSelfApprovals,
      bypass_for_machine_identities: body.bypassForMachineIdentities,
    });
    await replacePolicyEnvironments(
      trx,
      "secret",
      policy.id,
      envs.map((e) => e.id),
    );
    await replacePolicyPrincipals(trx, "secret", policy.id, ["approver", "bypasser"], [...approvers, ...bypassers]);
    noteAudit(ctx, { metadata: { policyId: policy.id, name: policy.name, secretPath } });
    return policy;
  });
  return (await toPolicyDtos(ctx.deps.db, [row]))[0]!;
};

/** The policy and the caller's ability in its project; another organization's policy is a 404. */
const policyInScope = async (ctx: ActorContext, policyId: string) => {
  const row = isUuid(policyId) ? await findPolicy(ctx.deps.db, policyId) : undefined;
  if (!row) throw new NotFoundError(`Secret approval policy with ID '${policyId}' not found`);
  const permission = await getProjectPermission(ctx, row.project_id, SECRET_MANAGER).catch((error: unknown) => {
    if (error instanceof NotFoundError)
      throw new NotFoundError(`Secret approval policy with ID '${policyId}' not found`);
    throw error;
  });
  return { row, ...permission };
};

export const updateApprovalPolicy = async (
  ctx: RequestContext,
  policyId: string,
  body: Partial<Omit<PolicyInput, "projectId" | "workspaceId">>,
) => {
  const { row, project, ability } = await policyInScope(ctx, policyId);
  assertCan(ability, "edit", SUBJECT);
  if (row.deleted_at !== null) throw new NotFoundError(`Secret approval policy with ID '${policyId}' not found`);
  const slugs = body.environments ?? (body.environment !== undefined ? [body.environment] : undefined);
  const envs = slugs === undefined ? undefined : await resolveEnvironments(ctx.deps.db, project.id, slugs);
  const approvers =
    body.approvers === undefined ? undefined : await resolvePrincipals(ctx, project.id, "approver", body.approvers);
  const bypassers =
    body.bypassers === undefined ? undefined : await resolvePrincipals(ctx, project.id, "bypasser", body.bypassers);
  const secretPath = body.secretPath === undefined ? row.secret_path : normalizePolicyPath(body.secretPath);
  const updated = await inTransaction(ctx, async (trx) => {
    const locked = (await lockPolicy(trx, policyId))!;
    const currentEnvs = envs ?? (await listPolicyEnvironments(trx, "secret", [policyId]));
    await assertScopeFree(trx, project.id, currentEnvs, secretPath, policyId);
    const currentApprovers =
      approvers ?? (await principalsOfPolicies(trx, "secret", [policyId])).get(policyId)!.approvers;
    assertApprovalsReachable(body.approvals ?? locked.approvals, currentApprovers);
    const next = await updatePolicyRow(trx, policyId, {
      name: body.name,
      secret_path: secretPath,
      approvals: body.approvals,
      enforcement_level: body.enforcementLevel,
      allowed_self_approvals: body.allowedSelfApprovals,
      bypass_for_machine_identities: body.bypassForMachineIdentities,
    });
    if (envs)
      await replacePolicyEnvironments(
        trx,
        "secret",
        policyId,
        envs.map((e) => e.id),
      );
    if (approvers) await replacePolicyPrincipals(trx, "secret", policyId, ["approver"], approvers);
    if (bypassers) await replacePolicyPrincipals(trx, "secret", policyId, ["bypasser"], bypassers);
    noteAudit(ctx, { metadata: { policyId, name: next.name, secretPath } });
    return next;
  });
  return (await toPolicyDtos(ctx.deps.db, [updated]))[0]!;
};

/** Retires a policy: its row stays for the requests that name it; its open requests are closed. */
export const deleteApprovalPolicy = async (ctx: RequestContext, policyId: string) => {
  const { row, ability } = await policyInScope(ctx, policyId);
  assertCan(ability, "delete", SUBJECT);
  if (row.deleted_at !== null) throw new NotFoundError(`Secret approval policy with ID '${policyId}' not found`);
  const retired = await inTransaction(ctx, async (trx) => {
    await lockPolicy(trx, policyId);
    const next = await retirePolicyRow(trx, policyId);
    await closeOpenRequestsOfPolicy(trx, policyId, { type: ctx.actor.type, id: ctx.actor.id });
    noteAudit(ctx, { metadata: { policyId, name: next.name } });
    return next;
  });
  return (await toPolicyDtos(ctx.deps.db, [retired]))[0]!;
};

export const getApprovalPolicy = async (ctx: RequestContext, policyId: string) => {
  const { row, ability } = await policyInScope(ctx, policyId);
  assertCan(ability, "read", SUBJECT);
  return (await toPolicyDtos(ctx.deps.db, [row]))[0]!;
};

export const listApprovalPolicies = async (
  ctx: RequestContext,
  query: { projectId?: string; workspaceId?: string },
) => {
  const { project, ability } = await getProjectPermission(ctx, projectOf(query), SECRET_MANAGER);
  assertCan(ability, "read", SUBJECT);
  return toPolicyDtos(ctx.deps.db, await listLivePolicies(ctx.deps.db, project.id));
};

/**
 * The live policy that protects a folder: an exact path beats a glob, a glob beats none; among equals
 * the oldest wins.
 */
export const findApplyingPolicy = async (db: Database, projectId: string, environment: string, secretPath: string) => {
  const path = normalizePolicyPath(secretPath);
  const candidates = await listLivePoliciesOfEnvironment(db, projectId, environment);
  return (
    candidates.find((p) => p.secret_path === path) ??
    candidates.find((p) => p.secret_path !== path && globMatches(p.secret_path, path))
  );
};

export const boardPolicy = async (
  ctx: RequestContext,
  query: { projectId?: string; workspaceId?: string; environment: string; secretPath: string },
) => {
  const { project } = await getProjectPermission(ctx, projectOf(query), SECRET_MANAGER);
  const row = await findApplyingPolicy(ctx.deps.db, project.id, query.environment, query.secretPath);
  return row ? (await toPolicyDtos(ctx.deps.db, [row]))[0]! : null;
};
