import type { Actor, RequestContext } from "../../context";
import type { Database } from "../../db/database";
import { afterCommit, inTransaction, type Tx } from "../../db/transaction";
import { BadRequestError, ForbiddenError, NotFoundError } from "../../errors";
import { toIso } from "../../lib/dates";
import { isBuiltInOrgRole, orgRoleCovers } from "../../permissions";
import { getOrgPermission } from "../authz/org-access";
import { assertCan } from "../authz/guard";
import { bumpPermissionVersion } from "../authz/permission-version";
import { endSessionsOfUser } from "../sessions/session.service";
import {
  deleteOrgMembershipRow,
  deleteUserGroupMembershipsInOrg,
  findOrgMembership,
  listOrgMemberships,
  lockOrgAdmins,
  updateOrgMembershipRow,
  upsertInvitation,
  findOrgMembershipOfUser,
  type OrgMembershipRow,
} from "./org-membership.repository";
import { deleteUserProjectMembershipsInOrg, findProjectsOfOrg } from "./project-membership.repository";
import { findOrganizationById, listOrganizationsOfUser } from "./organization.repository";
import { findUserById, listAliasTypesOfUser, findUserByEmail } from "./user.repository";
import { getProjectPermission } from "../authz/project-access";
import { grantsWithinBoundary } from "./project-members.service";
import { INVITED_PROJECT_ROLE } from "./provisioning.service";

const INVITATION_DAYS = 7;

/** An organization's people are another organization's secret: a foreign org is 404, not 403. */
const orgAbilityFor = (actor: Actor, orgId: string) => {
  if (orgId !== actor.orgId) throw new NotFoundError(`Organization with ID ${orgId} not found`);
  return getOrgPermission(actor, orgId);
};

/** The routes of a signed-in person: a machine identity has no profile, sessions or invitations. */
export const assertUser = (actor: Actor) => {
  if (actor.type !== "user") {
    throw new ForbiddenError("This route is for people signed in through single sign-on, not machine identities");
  }
};

export const getMe = async (ctx: RequestContext) => {
  assertUser(ctx.actor);
  const [user, membership] = await Promise.all([
    findUserById(ctx.deps.db, ctx.actor.id),
    findOrgMembershipOfUser(ctx.deps.db, ctx.actor.orgId, ctx.actor.id),
  ]);
  if (!user) throw new NotFoundError("User not found");
  return {
    id: user.id,
    username: user.username,
    email: user.email,
    // The names this organization knows the person by.
    firstName: membership?.first_name ?? user.first_name,
    lastName: membership?.last_name ?? user.last_name,
    isEmailVerified: user.is_email_verified,
    isAccepted: true,
    isMfaEnabled: false,
    authMethods: await listAliasTypesOfUser(ctx.deps.db, user.id),
    // An organization's sign-in never carries instance administration, which is the instance
    // admin identity's.
    superAdmin: ctx.actor.isInstanceAdmin,
    isGhost: false,
    createdAt: toIso(user.created_at),
    updatedAt: toIso(user.updated_at),
  };
};

const toOrganizationDto = (o: { id: string; name: string; slug: string; created_at: Date; updated_at: Date }) => ({
  id: o.id,
  name: o.name,
  slug: o.slug,
  createdAt: toIso(o.created_at),
  updatedAt: toIso(o.updated_at),
});

/** A person's organizations; an identity's is the one it belongs to. */
export const listMyOrganizations = async (ctx: RequestContext) => {
  if (ctx.actor.type === "user") {
    return (await listOrganizationsOfUser(ctx.deps.db, ctx.actor.id)).map(toOrganizationDto);
  }
  const org = await findOrganizationById(ctx.deps.db, ctx.actor.orgId);
  return org ? [toOrganizationDto(org)] : [];
};

export const signOutEverywhere = async (ctx: RequestContext) => {
  assertUser(ctx.actor);
  const ended = await inTransaction(ctx, async (trx) => {
    const count = await endSessionsOfUser(
      ctx.deps,
      trx,
      { userId: ctx.actor.id, orgId: ctx.actor.orgId },
      "sign-out-everywhere",
    );
    ctx.scope?.note({ metadata: { userId: ctx.actor.id, sessions: count } });
    return count;
  });
  return { message: `Signed out of ${ended} session${ended === 1 ? "" : "s"}` };
};

export const toOrgMembershipDto = (row: OrgMembershipRow) => ({
  id: row.id,
  orgId: row.org_id,
  role: row.role,
  status: row.status,
  isActive: row.is_active,
  inviteEmail: row.invite_email,
  user:
    row.user_id && row.email !== null
      ? {
          id: row.user_id,
          username: row.username ?? row.email,
          email: row.email,
          firstName: row.first_name ?? "",
          lastName: row.last_name ?? "",
        }
      : null,
  createdAt: toIso(row.created_at),
  updatedAt: toIso(row.updated_at),
});

export const listOrgPeople = async (ctx: RequestContext, orgId: string) => {
  assertCan(orgAbilityFor(ctx.actor, orgId), "read", "member");
  return (await listOrgMemberships(ctx.deps.db, orgId)).map(toOrgMembershipDto);
};

/** Nobody gives an org role they do not hold themselves; only built-in org roles exist for people. */
const assertMayGiveOrgRole = (actor: Actor, role: string) => {
  if (!isBuiltInOrgRole(role)) throw new BadRequestError(`Organization role with slug ${role} not found`);
  if (!orgRoleCovers(actor.orgRole, role)) {
    throw new ForbiddenError(`You cannot give the organization role ${role}: it grants more than yours`);
  }
};

const requireOrgMembership = async (ctx: RequestContext, db: Database | Tx, orgId: string, membershipId: string) => {
  const row = await findOrgMembership(db, orgId, membershipId).catch(() => undefined);
  if (!row) throw new NotFoundError(`Organization membership with ID ${membershipId} not found`);
  return row;
};

type MembershipChange = { role?: string; isActive?: boolean; remove?: true };

/**
 * Whether the caller may make this change to this membership, decided inside the change's
 * transaction with the organization's admin memberships locked: the caller's own membership is read
 * again (an admin deactivated a moment ago changes nothing), nobody changes someone who holds more
 * than they do, and no change leaves the organization without an active admin person.
 */
const lockAndCheckMembershipChange = async (
  ctx: RequestContext,
  trx: Tx,
  orgId: string,
  membershipId: string,
  change: MembershipChange,
) => {
  const admins = await lockOrgAdmins(trx, orgId);
  const row = await requireOrgMembership(ctx, trx, orgId, membershipId);
  if (row.user_id !== null && row.user_id === ctx.actor.id) {
    throw new BadRequestError(
      change.remove
        ? "You cannot remove yourself from the organization"
        : "You cannot change your own organization membership",
    );
  }
  let callerRole = ctx.actor.orgRole;
  if (ctx.actor.type === "user") {
    const own = await findOrgMembershipOfUser(trx, orgId, ctx.actor.id);
    if (!own || own.status !== "accepted" || !own.is_active) {
      throw new ForbiddenError("You are not an active member of this organization");
    }
    callerRole = own.role;
  }
  // Changing someone who holds more than you is changing more than you hold.
  if (!orgRoleCovers(callerRole, row.role)) {
    throw new ForbiddenError(
      change.remove
        ? "You cannot remove someone with a higher organization role"
        : "You cannot change the membership of someone with a higher organization role",
    );
  }
  if (change.role !== undefined) assertMayGiveOrgRole({ ...ctx.actor, orgRole: callerRole }, change.role);
  const isActiveAdmin = (a: { user_id: string | null; status: string; is_active: boolean }) =>
    a.user_id !== null && a.status === "accepted" && a.is_active;
  const takesAdmin =
    change.remove || change.isActive === false || (change.role !== undefined && change.role !== "admin");
  if (takesAdmin && admins.some((a) => a.id === row.id && isActiveAdmin(a))) {
    if (!admins.some((a) => a.id !== row.id && isActiveAdmin(a))) {
      throw new BadRequestError(
        "The organization must keep at least one active admin: make someone else an admin first",
      );
    }
  }
  return row;
};

export const updateOrgPerson = async (
  ctx: RequestContext,
  orgId: string,
  membershipId: string,
  body: { role?: string; isActive?: boolean },
) => {
  assertCan(orgAbilityFor(ctx.actor, orgId), "edit", "member");
  await requireOrgMembership(ctx, ctx.deps.db, orgId, membershipId);
  await inTransaction(ctx, async (trx) => {
    const row = await lockAndCheckMembershipChange(ctx, trx, orgId, membershipId, body);
    ctx.scope?.note({
      metadata: { membershipId: row.id, userId: row.user_id, role: body.role, isActive: body.isActive },
    });
    await updateOrgMembershipRow(trx, row.id, body);
    // A session's actor carries its org role: cached sessions see the new one at once.
    afterCommit(trx, () => ctx.deps.tokenCache.clear());
    if (body.isActive === false && row.user_id) {
      await endSessionsOfUser(ctx.deps, trx, { userId: row.user_id, orgId }, "deactivated");
    }
  });
  return toOrgMembershipDto((await findOrgMembership(ctx.deps.db, orgId, membershipId))!);
};

/** Remove a person from the organization: their project and group memberships and sessions go too. */
export const removeOrgPerson = async (ctx: RequestContext, orgId: string, membershipId: string) => {
  assertCan(orgAbilityFor(ctx.actor, orgId), "delete", "member");
  await requireOrgMembership(ctx, ctx.deps.db, orgId, membershipId);
  return inTransaction(ctx, async (trx) => {
    const row = await lockAndCheckMembershipChange(ctx, trx, orgId, membershipId, { remove: true });
    ctx.scope?.note({ metadata: { membershipId: row.id, userId: row.user_id, email: row.email ?? row.invite_email } });
    if (row.user_id) {
      const projects = await deleteUserProjectMembershipsInOrg(trx, orgId, row.user_id);
      await deleteUserGroupMembershipsInOrg(trx, orgId, row.user_id);
      await bumpPermissionVersion(
        trx,
        projects.map((p) => p.project_id),
      );
      await endSessionsOfUser(ctx.deps, trx, { userId: row.user_id, orgId }, "removed-from-organization");
    }
    await deleteOrgMembershipRow(trx, row.id);
    afterCommit(trx, () => ctx.deps.tokenCache.clear());
    return toOrgMembershipDto(row);
  });
};

/**
 * E-mail each invitation when a mail server is configured; the links that could not be sent (all of
 * them without a mail server) go back to the inviter to pass on.
 */
const mailInvitations = async (ctx: RequestContext, orgName: string, links: { email: string; link: string }[]) => {
  const mailer = ctx.deps.mailer;
  if (!mailer) return links;
  const unsent: typeof links = [];
  for (const invite of links) {
    try {
      await mailer.send({
        to: invite.email,
        subject: `You are invited to ${orgName} on Keyward`,
        text: `You have been invited to the organization ${orgName}.\n\nSign in with your organization's single sign-on to accept:\n${invite.link}\n\nThe invitation expires in ${INVITATION_DAYS} days.\n`,
      });
    } catch (error) {
      ctx.deps.logger.warn({ err: error, to: invite.email }, "could not send an invitation e-mail");
      unsent.push(invite);
    }
  }
  return unsent;
};

/**
 * Invite people: each e-mail becomes a pending membership, claimed at that person's first sign-in
 * with the same verified e-mail. Inviting again renews the invitation; inviting a member is a 400.
 */
export const inviteToOrganization = async (
  ctx: RequestContext,
  body: { inviteeEmails: string[]; organizationId: string; organizationRoleSlug: string; projectIds?: string[] },
  publicBase: string,
) => {
  const orgId = body.organizationId;
  assertCan(orgAbilityFor(ctx.actor, orgId), "create", "member");
  const org = await findOrganizationById(ctx.deps.db, orgId);
  if (!org) throw new NotFoundError(`Organization with ID ${orgId} not found`);
  assertMayGiveOrgRole(ctx.actor, body.organizationRoleSlug);
  const emails = [...new Set(body.inviteeEmails)];
  for (const email of emails) {
    const user = await findUserByEmail(ctx.deps.db, email);
    const existing = user && (await findOrgMembershipOfUser(ctx.deps.db, orgId, user.id));
    if (existing) throw new BadRequestError(`User ${email} is already a member of the organization`);
  }
  const projectIds = [...new Set(body.projectIds ?? [])];
  const projects = await findProjectsOfOrg(
    ctx.deps.db,
    orgId,
    projectIds.filter((id) => /^[0-9a-f-]{36}$/i.test(id)),
  );
  if (projects.length !== projectIds.length) throw new NotFoundError("Some of the projects were not found");
  // Whoever adds people to a project through an invitation must be allowed to add them there with
  // the role they will hold, as when adding a member directly.
  for (const project of projects) {
    await grantsWithinBoundary(ctx, await getProjectPermission(ctx, project.id), [INVITED_PROJECT_ROLE]);
  }
  const expiresAt = new Date(ctx.deps.clock.now() + INVITATION_DAYS * 86_400_000);
  ctx.scope?.note({ metadata: { emails, role: body.organizationRoleSlug, projectIds } });
  await inTransaction(ctx, async (trx) => {
    for (const email of emails) {
      await upsertInvitation(trx, { orgId, email, role: body.organizationRoleSlug, expiresAt, projectIds });
    }
  });
  const links = emails.map((email) => ({
    email,
    link: `${publicBase}/login?org=${encodeURIComponent(org.slug)}&email=${encodeURIComponent(email)}`,
  }));
  const unsent = await mailInvitations(ctx, org.name, links);
  return {
    message:
      unsent.length === 0 && ctx.deps.mailer
        ? `Sent an invitation e-mail to ${emails.join(", ")}`
        : `Send an invite link to ${unsent.map((l) => l.email).join(", ")}`,
    completeInviteLinks: unsent,
  };
};
