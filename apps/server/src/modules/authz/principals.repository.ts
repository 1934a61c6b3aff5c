import { sql } from "kysely";
import type { Database } from "../../db/database";

/**
 * Who a principal is, for every module that must know before it acts: an identity of an organization,
 * and whether an identity is the instance's admin.
 */
export const findIdentityInOrg = (db: Database, orgId: string, identityId: string) =>
  db
    .selectFrom("identities")
    .select(["id", "name", "org_id", "project_id", "org_role", "has_delete_protection"])
    .where("id", "=", identityId)
    .where("org_id", "=", orgId)
    .executeTakeFirst();

export type IdentityRow = NonNullable<Awaited<ReturnType<typeof findIdentityInOrg>>>;

export const isInstanceAdminIdentity = async (db: Database, identityId: string) =>
  (await db
    .selectFrom("instance_config")
    .select("id")
    .where("admin_identity_id", "=", identityId)
    .executeTakeFirst()) !== undefined;

/** A person or a machine identity: who can be in a group, a project, a policy. */
export type Holder = { type: "user" | "identity"; id: string };
export type PrincipalType = "user" | "identity" | "group";
export type PrincipalRef = { type: PrincipalType; id: string };

/**
 * People of an organization named by username or e-mail, either matched without regard to case
 * (a username is the e-mail it was made from, and e-mails are unique without regard to case). Only
 * people who joined: an invitation not yet accepted names nobody.
 */
export const findOrgPeopleByNames = (db: Database, orgId: string, names: readonly string[]) => {
  const wanted = [...new Set(names.map((n) => n.toLowerCase()))];
  return wanted.length === 0
    ? Promise.resolve([])
    : db
        .selectFrom("org_user_memberships as om")
        .innerJoin("users as u", "u.id", "om.user_id")
        .select(["u.id", "u.username", "u.email", "u.first_name", "u.last_name", "om.id as org_membership_id"])
        .where("om.org_id", "=", orgId)
        .where("om.status", "=", "accepted")
        .where((eb) =>
          eb.or([eb(sql<string>`lower(u.username)`, "in", wanted), eb(sql<string>`lower(u.email)`, "in", wanted)]),
        )
        .execute();
};
export type OrgPersonRow = Awaited<ReturnType<typeof findOrgPeopleByNames>>[number];

/** The groups a person or an identity belongs to. */
export const findGroupIdsOfHolder = async (db: Database, holder: Holder) =>
  (holder.type === "user"
    ? await db.selectFrom("group_user_members").select("group_id").where("user_id", "=", holder.id).execute()
    : await db.selectFrom("group_identity_members").select("group_id").where("identity_id", "=", holder.id).execute()
  ).map((r) => r.group_id);

/** The slugs of the groups of an organization a person or an identity belongs to. */
export const findGroupSlugsOfHolder = async (db: Database, orgId: string, holder: Holder) =>
  (holder.type === "user"
    ? await db
        .selectFrom("group_user_members as gm")
        .innerJoin("groups as g", "g.id", "gm.group_id")
        .select("g.slug")
        .where("gm.user_id", "=", holder.id)
        .where("g.org_id", "=", orgId)
        .execute()
    : await db
        .selectFrom("group_identity_members as gm")
        .innerJoin("groups as g", "g.id", "gm.group_id")
        .select("g.slug")
        .where("gm.identity_id", "=", holder.id)
        .where("g.org_id", "=", orgId)
        .execute()
  ).map((r) => r.slug);

/**
 * The projects of an organization a person or an identity is a member of, directly or through a
 * group that is in the project: the same rule as `findProjectMembersAmong`, from the holder's side.
 */
export const findProjectIdsOfHolder = async (db: Database, orgId: string, holder: Holder) => {
  const direct =
    holder.type === "user"
      ? db
          .selectFrom("project_user_memberships as m")
          .innerJoin("projects as p", "p.id", "m.project_id")
          .select("p.id")
          .where("m.user_id", "=", holder.id)
      : db
          .selectFrom("identity_project_memberships as m")
          .innerJoin("projects as p", "p.id", "m.project_id")
          .select("p.id")
          .where("m.identity_id", "=", holder.id);
  const viaGroup =
    holder.type === "user"
      ? db
          .selectFrom("group_user_members as gm")
          .innerJoin("group_project_memberships as gpm", "gpm.group_id", "gm.group_id")
          .innerJoin("projects as p", "p.id", "gpm.project_id")
          .select("p.id")
          .where("gm.user_id", "=", holder.id)
      : db
          .selectFrom("group_identity_members as gm")
          .innerJoin("group_project_memberships as gpm", "gpm.group_id", "gm.group_id")
          .innerJoin("projects as p", "p.id", "gpm.project_id")
          .select("p.id")
          .where("gm.identity_id", "=", holder.id);
  const rows = await direct
    .where("p.org_id", "=", orgId)
    .union(viaGroup.where("p.org_id", "=", orgId))
    .execute();
  return rows.map((r) => r.id);
};

/**
 * Of the principals named, those that are members of the project, as `type:id` keys: a person or an
 * identity directly or through a group that is in the project; a group by its own project membership.
 */
export const findProjectMembersAmong = async (db: Database, projectId: string, principals: readonly PrincipalRef[]) => {
  const ids = (type: PrincipalType) => [...new Set(principals.filter((p) => p.type === type).map((p) => p.id))];
  const [users, identities, groups] = [ids("user"), ids("identity"), ids("group")];
  const found = new Set<string>();
  if (users.length > 0)
    for (const r of await db
      .selectFrom("project_user_memberships")
      .select("user_id as id")
      .where("project_id", "=", projectId)
      .where("user_id", "in", users)
      .union(
        db
          .selectFrom("group_user_members as gm")
          .innerJoin("group_project_memberships as gpm", "gpm.group_id", "gm.group_id")
          .select("gm.user_id as id")
          .where("gpm.project_id", "=", projectId)
          .where("gm.user_id", "in", users),
      )
      .execute())
      found.add(`user:${r.id}`);
  if (identities.length > 0)
    for (const r of await db
      .selectFrom("identity_project_memberships")
      .select("identity_id as id")
      .where("project_id", "=", projectId)
      .where("identity_id", "in", identities)
      .union(
        db
          .selectFrom("group_identity_members as gm")
          .innerJoin("group_project_memberships as gpm", "gpm.group_id", "gm.group_id")
          .select("gm.identity_id as id")
          .where("gpm.project_id", "=", projectId)
          .where("gm.identity_id", "in", identities),
      )
      .execute())
      found.add(`identity:${r.id}`);
  if (groups.length > 0)
    for (const r of await db
      .selectFrom("group_project_memberships")
      .select("group_id as id")
      .where("project_id", "=", projectId)
      .where("group_id", "in", groups)
      .execute())
      found.add(`group:${r.id}`);
  return found;
};

/** What principals are called, by `type:id`: a person's username, an identity's name, a group's name and slug. */
export const findPrincipalNames = async (db: Database, principals: readonly PrincipalRef[]) => {
  const ids = (type: PrincipalType) => [...new Set(principals.filter((p) => p.type === type).map((p) => p.id))];
  const [users, identities, groups] = [ids("user"), ids("identity"), ids("group")];
  const names = new Map<string, { name: string; slug?: string }>();
  if (users.length > 0)
    for (const r of await db.selectFrom("users").select(["id", "username"]).where("id", "in", users).execute())
      names.set(`user:${r.id}`, { name: r.username });
  if (identities.length > 0)
    for (const r of await db.selectFrom("identities").select(["id", "name"]).where("id", "in", identities).execute())
      names.set(`identity:${r.id}`, { name: r.name });
  if (groups.length > 0)
    for (const r of await db.selectFrom("groups").select(["id", "name", "slug"]).where("id", "in", groups).execute())
      names.set(`group:${r.id}`, { name: r.name, slug: r.slug });
  return names;
};
