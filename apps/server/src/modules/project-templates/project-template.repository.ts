import type { Database } from "../../db/database";
import type {
  TemplateEnvironmentRow,
  TemplateManagedIdentityRow,
  TemplateRoleRow,
} from "../../db/tables/project-structure";
import type { RoleGrant } from "../authz/membership-roles";

const TEMPLATE_COLUMNS = [
  "id",
  "org_id",
  "name",
  "description",
  "type",
  "roles",
  "environments",
  "project_managed_identities",
  "created_at",
  "updated_at",
] as const;

export const findTemplateInOrg = (db: Database, orgId: string, templateId: string) =>
  db
    .selectFrom("project_templates")
    .select(TEMPLATE_COLUMNS)
    .where("org_id", "=", orgId)
    .where("id", "=", templateId)
    .executeTakeFirst();

export const findTemplateByName = (db: Database, orgId: string, name: string) =>
  db
    .selectFrom("project_templates")
    .select(TEMPLATE_COLUMNS)
    .where("org_id", "=", orgId)
    .where("name", "=", name)
    .executeTakeFirst();

export type TemplateRow = NonNullable<Awaited<ReturnType<typeof findTemplateInOrg>>>;

export const listTemplates = (db: Database, orgId: string, type?: string) =>
  db
    .selectFrom("project_templates")
    .select(TEMPLATE_COLUMNS)
    .where("org_id", "=", orgId)
    .$if(type !== undefined, (qb) => qb.where("type", "=", type!))
    .orderBy("created_at")
    .orderBy("id")
    .execute();

type TemplateValues = {
  name: string;
  description: string | null;
  roles: TemplateRoleRow[];
  environments: TemplateEnvironmentRow[] | null;
  project_managed_identities: TemplateManagedIdentityRow[] | null;
};

export const insertTemplate = (db: Database, values: TemplateValues & { org_id: string; type: string }) =>
  db
    .insertInto("project_templates")
    .values({
      ...values,
      roles: JSON.stringify(values.roles),
      environments: JSON.stringify(values.environments),
      project_managed_identities: JSON.stringify(values.project_managed_identities),
    })
    .returning(TEMPLATE_COLUMNS)
    .executeTakeFirstOrThrow();

export const updateTemplateRow = (db: Database, templateId: string, values: Partial<TemplateValues>) =>
  db
    .updateTable("project_templates")
    .set({
      ...(values.name !== undefined ? { name: values.name } : {}),
      ...(values.description !== undefined ? { description: values.description } : {}),
      ...(values.roles !== undefined ? { roles: JSON.stringify(values.roles) } : {}),
      ...(values.environments !== undefined ? { environments: JSON.stringify(values.environments) } : {}),
      ...(values.project_managed_identities !== undefined
        ? { project_managed_identities: JSON.stringify(values.project_managed_identities) }
        : {}),
      updated_at: new Date(),
    })
    .where("id", "=", templateId)
    .returning(TEMPLATE_COLUMNS)
    .executeTakeFirstOrThrow();

export const deleteTemplateRow = (db: Database, templateId: string) =>
  db.deleteFrom("project_templates").where("id", "=", templateId).execute();

/** The users, groups and identities a template adds, with what responses show of them. */
export const listTemplateMembers = async (db: Database, templateIds: string[]) => {
  if (templateIds.length === 0) return { users: [], groups: [], identities: [] };
  const [users, groups, identities] = await Promise.all([
    db
      .selectFrom("project_template_user_memberships as t")
      .innerJoin("org_user_memberships as om", "om.id", "t.org_membership_id")
      .innerJoin("users as u", "u.id", "om.user_id")
      .select(["t.template_id", "u.id as user_id", "u.username", "t.roles"])
      .where("t.template_id", "in", templateIds)
      .orderBy("t.created_at")
      .orderBy("u.username")
      .execute(),
    db
      .selectFrom("project_template_group_memberships as t")
      .innerJoin("groups as g", "g.id", "t.group_id")
      .select(["t.template_id", "g.id as group_id", "g.slug", "t.roles"])
      .where("t.template_id", "in", templateIds)
      .orderBy("t.created_at")
      .orderBy("g.slug")
      .execute(),
    db
      .selectFrom("project_template_identity_memberships as t")
      .innerJoin("identities as i", "i.id", "t.identity_id")
      .select(["t.template_id", "i.id as identity_id", "i.name", "t.roles"])
      .where("t.template_id", "in", templateIds)
      .orderBy("t.created_at")
      .orderBy("i.name")
      .execute(),
  ]);
  return { users, groups, identities };
};

export type TemplateMembers = Awaited<ReturnType<typeof listTemplateMembers>>;

export type ResolvedMembers = {
  users: { orgMembershipId: string; roles: string[] }[];
  groups: { groupId: string; roles: string[] }[];
  identities: { identityId: string; roles: string[] }[];
};

/** Replace each member list that is given (undefined leaves it alone). */
export const replaceTemplateMembers = async (db: Database, templateId: string, members: Partial<ResolvedMembers>) => {
  if (members.users) {
    await db.deleteFrom("project_template_user_memberships").where("template_id", "=", templateId).execute();
    if (members.users.length > 0) {
      await db
        .insertInto("project_template_user_memberships")
        .values(
          members.users.map((u) => ({
            template_id: templateId,
            org_membership_id: u.orgMembershipId,
            roles: JSON.stringify(u.roles),
          })),
        )
        .execute();
    }
  }
  if (members.groups) {
    await db.deleteFrom("project_template_group_memberships").where("template_id", "=", templateId).execute();
    if (members.groups.length > 0) {
      await db
        .insertInto("project_template_group_memberships")
        .values(
          members.groups.map((g) => ({ template_id: templateId, group_id: g.groupId, roles: JSON.stringify(g.roles) })),
        )
        .execute();
    }
  }
  if (members.identities) {
    await db.deleteFrom("project_template_identity_memberships").where("template_id", "=", templateId).execute();
    if (members.identities.length > 0) {
      await db
        .insertInto("project_template_identity_memberships")
        .values(
          members.identities.map((i) => ({
            template_id: templateId,
            identity_id: i.identityId,
            roles: JSON.stringify(i.roles),
          })),
        )
        .execute();
    }
  }
};

export const findOrgIdentitiesByIds = (db: Database, orgId: string, ids: string[]) =>
  ids.length === 0
    ? Promise.resolve([])
    : db
        .selectFrom("identities")
        .select(["id", "name"])
        .where("org_id", "=", orgId)
        .where("project_id", "is", null)
        .where("id", "in", ids)
        .execute();

/** A project membership of a user, as templates create them. */
export const insertUserProjectMembership = async (
  db: Database,
  projectId: string,
  userId: string,
  roles: RoleGrant[],
) => {
  const { id } = await db
    .insertInto("project_user_memberships")
    .values({ project_id: projectId, user_id: userId })
    .returning("id")
    .executeTakeFirstOrThrow();
  await db
    .insertInto("project_user_membership_roles")
    .values(
      roles.map((r) => ({ membership_id: id, role: r.role, custom_role_id: r.customRoleId, is_temporary: false })),
    )
    .execute();
  return id;
};

/** A custom role a template creates in a new project. */
export const insertTemplateRole = (
  db: Database,
  projectId: string,
  role: { name: string; slug: string; permissions: unknown },
) =>
  db
    .insertInto("project_roles")
    .values({
      project_id: projectId,
      name: role.name,
      slug: role.slug,
      description: null,
      permissions: JSON.stringify(role.permissions),
    })
    .returning("id")
    .executeTakeFirstOrThrow();
