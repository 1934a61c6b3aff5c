import { sql } from "kysely";
import type { Database } from "../../db/database";

export const GROUP_COLUMNS = ["id", "org_id", "name", "slug", "role", "created_at", "updated_at"] as const;

export const findGroupInOrg = (db: Database, orgId: string, groupId: string) =>
  db
    .selectFrom("groups")
    .select(GROUP_COLUMNS)
    .where("org_id", "=", orgId)
    .where("id", "=", groupId)
    .executeTakeFirst();

export type GroupRow = NonNullable<Awaited<ReturnType<typeof findGroupInOrg>>>;

export const findGroupByName = (db: Database, orgId: string, name: string) =>
  db.selectFrom("groups").select(GROUP_COLUMNS).where("org_id", "=", orgId).where("name", "=", name).executeTakeFirst();

export const findGroupBySlug = (db: Database, orgId: string, slug: string) =>
  db.selectFrom("groups").select(GROUP_COLUMNS).where("org_id", "=", orgId).where("slug", "=", slug).executeTakeFirst();

export const findGroupsBySlugs = (db: Database, orgId: string, slugs: string[]) =>
  slugs.length === 0
    ? Promise.resolve([])
    : db.selectFrom("groups").select(GROUP_COLUMNS).where("org_id", "=", orgId).where("slug", "in", slugs).execute();

export const listGroups = (db: Database, orgId: string) =>
  db.selectFrom("groups").select(GROUP_COLUMNS).where("org_id", "=", orgId).orderBy("name").orderBy("id").execute();

export const insertGroup = (db: Database, values: { org_id: string; name: string; slug: string; role: string }) =>
  db.insertInto("groups").values(values).returning(GROUP_COLUMNS).executeTakeFirstOrThrow();

export const updateGroupRow = (
  db: Database,
  groupId: string,
  values: { name?: string; slug?: string; role?: string },
) =>
  db
    .updateTable("groups")
    .set({ ...values, updated_at: new Date() })
    .where("id", "=", groupId)
    .returning(GROUP_COLUMNS)
    .executeTakeFirstOrThrow();

export const deleteGroupRow = (db: Database, groupId: string) =>
  db.deleteFrom("groups").where("id", "=", groupId).execute();

type MemberFilter = { offset: number; limit: number; search?: string; filter?: "existingMembers" | "nonMembers" };

const like = (value: string) => `%${value.replace(/[\\%_]/g, "\\$&")}%`;

/** The organization's users, each with whether (and since when) it belongs to the group. */
export const listGroupUsers = async (
  db: Database,
  orgId: string,
  groupId: string,
  query: MemberFilter & { username?: string },
) => {
  const base = db
    .selectFrom("org_user_memberships as om")
    .innerJoin("users as u", "u.id", "om.user_id")
    .leftJoin("group_user_members as gm", (join) =>
      join.onRef("gm.user_id", "=", "u.id").on("gm.group_id", "=", groupId),
    )
    .where("om.org_id", "=", orgId)
    .$if(query.username !== undefined, (qb) => qb.where("u.username", "=", query.username!))
    .$if(query.search !== undefined && query.search.length > 0, (qb) =>
      qb.where((eb) =>
        eb.or([
          eb("u.username", "ilike", like(query.search!)),
          eb("u.email", "ilike", like(query.search!)),
          eb("u.first_name", "ilike", like(query.search!)),
          eb("u.last_name", "ilike", like(query.search!)),
        ]),
      ),
    )
    .$if(query.filter === "existingMembers", (qb) => qb.where("gm.id", "is not", null))
    .$if(query.filter === "nonMembers", (qb) => qb.where("gm.id", "is", null));
  const [rows, count] = await Promise.all([
    base
      .select([
        "u.id",
        "u.username",
        "u.email",
        "u.first_name",
        "u.last_name",
        "gm.id as member_id",
        "gm.created_at as joined_at",
      ])
      .orderBy("u.username")
      .offset(query.offset)
      .limit(query.limit)
      .execute(),
    base.select((eb) => eb.fn.countAll<string>().as("count")).executeTakeFirstOrThrow(),
  ]);
  return { rows, totalCount: Number(count.count) };
};

/** The organization's own identities (not project-owned), each with whether it belongs to the group. */
export const listGroupIdentities = async (db: Database, orgId: string, groupId: string, query: MemberFilter) => {
  const base = db
    .selectFrom("identities as i")
    .leftJoin("group_identity_members as gm", (join) =>
      join.onRef("gm.identity_id", "=", "i.id").on("gm.group_id", "=", groupId),
    )
    .where("i.org_id", "=", orgId)
    .where("i.project_id", "is", null)
    .$if(query.search !== undefined && query.search.length > 0, (qb) =>
      qb.where("i.name", "ilike", like(query.search!)),
    )
    .$if(query.filter === "existingMembers", (qb) => qb.where("gm.id", "is not", null))
    .$if(query.filter === "nonMembers", (qb) => qb.where("gm.id", "is", null));
  const [rows, count] = await Promise.all([
    base
      .select(["i.id", "i.name", "gm.id as member_id", "gm.created_at as joined_at"])
      .orderBy("i.name")
      .orderBy("i.id")
      .offset(query.offset)
      .limit(query.limit)
      .execute(),
    base.select((eb) => eb.fn.countAll<string>().as("count")).executeTakeFirstOrThrow(),
  ]);
  return { rows, totalCount: Number(count.count) };
};

export const insertUserMember = (db: Database, groupId: string, userId: string) =>
  db.insertInto("group_user_members").values({ group_id: groupId, user_id: userId }).execute();

export const deleteUserMember = async (db: Database, groupId: string, userId: string) =>
  (
    await db
      .deleteFrom("group_user_members")
      .where("group_id", "=", groupId)
      .where("user_id", "=", userId)
      .executeTakeFirst()
  ).numDeletedRows > 0n;

export const insertIdentityMember = (db: Database, groupId: string, identityId: string) =>
  db.insertInto("group_identity_members").values({ group_id: groupId, identity_id: identityId }).execute();

export const deleteIdentityMember = async (db: Database, groupId: string, identityId: string) =>
  (
    await db
      .deleteFrom("group_identity_members")
      .where("group_id", "=", groupId)
      .where("identity_id", "=", identityId)
      .executeTakeFirst()
  ).numDeletedRows > 0n;

/** The organization's groups a provisioning client pages through, by name (case-insensitive) if asked, with the full count. */
export const pageGroups = async (
  db: Database,
  orgId: string,
  query: { name?: string; offset: number; limit: number },
) => {
  const base = db
    .selectFrom("groups")
    .where("org_id", "=", orgId)
    .$if(query.name !== undefined, (qb) => qb.where(sql<boolean>`lower(name) = ${query.name!.toLowerCase()}`));
  const [rows, count] = await Promise.all([
    base.select(GROUP_COLUMNS).orderBy("created_at").orderBy("id").offset(query.offset).limit(query.limit).execute(),
    base.select((eb) => eb.fn.countAll<string>().as("count")).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(count.count) };
};

/** The people of these groups, each with their org membership (the id a provisioning client knows them by). */
export const listGroupUserMembersOf = (db: Database, orgId: string, groupIds: string[]) =>
  groupIds.length === 0
    ? Promise.resolve([])
    : db
        .selectFrom("group_user_members as gm")
        .innerJoin("users as u", "u.id", "gm.user_id")
        .innerJoin("org_user_memberships as om", (j) =>
          j.onRef("om.user_id", "=", "gm.user_id").on("om.org_id", "=", orgId),
        )
        .select(["gm.group_id", "gm.user_id", "om.id as membership_id", "u.email"])
        .where("gm.group_id", "in", groupIds)
        .orderBy("gm.created_at")
        .execute();

/** The users behind these org membership ids (unknown ids are left out). */
export const findUsersOfOrgMemberships = (db: Database, orgId: string, membershipIds: string[]) =>
  membershipIds.length === 0
    ? Promise.resolve([])
    : db
        .selectFrom("org_user_memberships")
        .select(["id", "user_id"])
        .where("org_id", "=", orgId)
        .where("status", "=", "accepted")
        .where(sql<boolean>`id = any(${membershipIds}::uuid[])`)
        .execute();

export const insertUserMembers = (db: Database, groupId: string, userIds: string[]) =>
  userIds.length === 0
    ? Promise.resolve()
    : db
        .insertInto("group_user_members")
        .values(userIds.map((user_id) => ({ group_id: groupId, user_id })))
        .onConflict((oc) => oc.columns(["group_id", "user_id"]).doNothing())
        .execute()
        .then(() => undefined);

/** Removes these people (or, with "all", everyone) from the group. */
export const deleteUserMembers = async (db: Database, groupId: string, userIds: string[] | "all") => {
  if (userIds !== "all" && userIds.length === 0) return;
  await db
    .deleteFrom("group_user_members")
    .where("group_id", "=", groupId)
    .$if(userIds !== "all", (qb) => qb.where("user_id", "in", userIds as string[]))
    .execute();
};
