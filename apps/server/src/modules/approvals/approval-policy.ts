import type { RequestContext } from "../../context";
import type { Database } from "../../db/database";
import { BadRequestError, NotFoundError } from "../../errors";
import {
  groupIdsOf,
  isAmong,
  orgPeopleByNames,
  principalKey,
  principalNames,
  projectMembersAmong,
  type Holder,
  type PrincipalRef,
  type PrincipalType,
} from "../authz/principals";
import {
  findEnvironmentsBySlugs,
  listPolicyPrincipals,
  type PolicyKind,
  type PolicyPrincipalRow,
  type PrincipalRole,
  type StoredPrincipal,
} from "./approval-policy.repository";

/**
 * What both kinds of approval policy do alike: who may be named (a person by id, username or e-mail,
 * an identity or a group by id, each a member of the project directly or through a group), who a
 * policy names and how a holder stands to it, and its environments.
 */

export type { PolicyKind, PrincipalRole, StoredPrincipal } from "./approval-policy.repository";

/** A principal as a request names it: a person by id or username, a group or an identity by id. */
export type PrincipalInput = { type: PrincipalType; id?: string; username?: string };

/** The words each kind's routes answer with when a principal cannot be named. */
export type PrincipalMessages = {
  unknownUser: (username: string | undefined) => string;
  outsiders: (outsiders: readonly PrincipalRef[]) => string;
};

/**
 * The principals as stored, each once, people named by username or e-mail resolved; each must be a
 * member of the project (a person or an identity directly or through a group, a group by its own
 * membership).
 */
export const resolvePrincipals = async (
  ctx: RequestContext,
  projectId: string,
  role: PrincipalRole,
  inputs: readonly PrincipalInput[],
  messages: PrincipalMessages,
): Promise<StoredPrincipal[]> => {
  const usernames = inputs.flatMap((p) => (p.type === "user" && p.id === undefined && p.username ? [p.username] : []));
  const byName = await orgPeopleByNames(ctx.deps.db, ctx.actor.orgId, usernames);
  const seen = new Set<string>();
  const principals: StoredPrincipal[] = [];
  for (const input of inputs) {
    let id = input.id?.toLowerCase();
    if (input.type === "user" && id === undefined) {
      id = input.username === undefined ? undefined : byName.get(input.username)?.id;
      if (id === undefined) throw new BadRequestError(messages.unknownUser(input.username));
    }
    const principal = { role, type: input.type, id: id! };
    if (seen.has(principalKey(principal))) continue;
    seen.add(principalKey(principal));
    principals.push(principal);
  }
  const members = await projectMembersAmong(ctx.deps.db, projectId, principals);
  const outsiders = principals.filter((p) => !members.has(principalKey(p)));
  if (outsiders.length > 0) throw new BadRequestError(messages.outsiders(outsiders));
  return principals;
};

/** A group may hold any number of people, so a policy with a group approver is not counted. */
export const assertApprovalsReachable = (approvals: number, approvers: readonly PrincipalRef[], message: string) => {
  if (!approvers.some((p) => p.type === "group") && approvals > approvers.length) throw new BadRequestError(message);
};

export type NamedPrincipal = { type: PrincipalType; id: string; name?: string; slug?: string };

/** Each policy's approvers and bypassers with what they are called, by policy id. */
export const principalsOfPolicies = async (db: Database, kind: PolicyKind, policyIds: readonly string[]) => {
  const rows = await listPolicyPrincipals(db, kind, policyIds);
  const refs = rows.map((r) => ({ type: r.principal_type as PrincipalType, id: r.principal_id }));
  const names = await principalNames(db, refs);
  const byPolicy = new Map(
    policyIds.map((id) => [id, { approvers: [] as NamedPrincipal[], bypassers: [] as NamedPrincipal[] }]),
  );
  for (const row of rows) {
    const ref = { type: row.principal_type as PrincipalType, id: row.principal_id };
    const named = { ...ref, ...names.get(principalKey(ref)) };
    byPolicy.get(row.policy_id)?.[row.role === "approver" ? "approvers" : "bypassers"].push(named);
  }
  return byPolicy;
};

const listed = (rows: readonly PolicyPrincipalRow[], policyId: string, role: PrincipalRole) =>
  rows
    .filter((r) => r.policy_id === policyId && r.role === role)
    .map((r) => ({ type: r.principal_type as PrincipalType, id: r.principal_id }));

/** How a holder stands to policies: the ones naming it as approver or bypasser, directly or through a group. */
export const standingOf = async (db: Database, kind: PolicyKind, holder: Holder, policyIds: readonly string[]) => {
  const [rows, groupIds] = await Promise.all([listPolicyPrincipals(db, kind, policyIds), groupIdsOf(db, holder)]);
  const of = (role: PrincipalRole) =>
    new Set(policyIds.filter((id) => isAmong(listed(rows, id, role), holder, groupIds)));
  return { approverOf: of("approver"), bypasserOf: of("bypasser") };
};

/** How a holder stands to one policy. */
export const rolesIn = async (db: Database, kind: PolicyKind, policyId: string, holder: Holder) => {
  const standing = await standingOf(db, kind, holder, [policyId]);
  return { approver: standing.approverOf.has(policyId), bypasser: standing.bypasserOf.has(policyId) };
};

/** The project's environments by slug, in the order named, each once; a slug that names none is `missing`. */
export const resolveEnvironments = async (
  db: Database,
  projectId: string,
  slugs: readonly string[],
  missing: (slugs: string[]) => string,
) => {
  const unique = [...new Set(slugs)];
  const found = await findEnvironmentsBySlugs(db, projectId, unique);
  const absent = unique.filter((slug) => !found.some((e) => e.slug === slug));
  if (absent.length > 0) throw new NotFoundError(missing(absent));
  return unique.map((slug) => found.find((e) => e.slug === slug)!);
};
