import { sql, type RawBuilder } from "kysely";
import type { Actor } from "../../context";
import { batchedLookup } from "../../db/batched-lookup";
import { compiledOnce } from "../../db/compiled-once";
import type { Database } from "../../db/database";
import type { TemplateContext } from "../../permissions";

export const PROJECT_COLUMNS = [
  "id",
  "org_id",
  "name",
  "slug",
  "description",
  "type",
  "permission_version",
  "created_at",
  "updated_at",
] as const;

export const findProjectById = (db: Database, projectId: string) =>
  db.selectFrom("projects").select(PROJECT_COLUMNS).where("id", "=", projectId).executeTakeFirst();

const projectsByIds = compiledOnce((db, ids: string[]) =>
  db
    .selectFrom("projects")
    .select(PROJECT_COLUMNS)
    .where(sql<boolean>`id = any(${ids}::uuid[])`),
);
const batchedProjectById = batchedLookup(projectsByIds, (row) => row.id);

/**
 * The hot path's project lookup (an ability is cached, only the version is needed): concurrent
 * requests of one event-loop turn share one round trip. `projectId` must be a UUID.
 */
export const findProjectByIdBatched = (db: Database, projectId: string) => batchedProjectById(db, projectId);

export const findProjectBySlug = (db: Database, orgId: string, slug: string) =>
  db
    .selectFrom("projects")
    .select(PROJECT_COLUMNS)
    .where("org_id", "=", orgId)
    .where("slug", "=", slug)
    .executeTakeFirst();

export type ProjectRow = NonNullable<Awaited<ReturnType<typeof findProjectById>>>;

/** One role or privilege as the loader sees it; timestamps arrive as JSON strings. */
export type GrantJson = {
  role?: string;
  isTemporary: boolean;
  start: string | null;
  end: string | null;
  permissions: unknown;
};

/** Everything that feeds an identity's ability in a project. */
export type GrantsJson = {
  membershipId: string | null;
  groupMembershipId: string | null;
  roles: GrantJson[] | null;
  groupRoles: GrantJson[] | null;
  privileges: GrantJson[] | null;
};

type AccessRow = ProjectRow & { grants: GrantsJson };

const roleJson = (alias: string) =>
  sql.raw(`json_build_object('role', ${alias}.role, 'isTemporary', ${alias}.is_temporary,
    'start', ${alias}.temporary_access_start_time, 'end', ${alias}.temporary_access_end_time, 'permissions', pr.permissions)`);

/**
 * The project with every grant of the identity in it (direct roles, group roles, additional
 * privileges) in one round trip. Only run when no cached ability is current: its correlated
 * subqueries cost far more to plan than the small lookups of the hot path.
 */
const accessQuery = (where: RawBuilder<unknown>, identityId: string) => sql<AccessRow>`
  select p.id, p.org_id, p.name, p.slug, p.description, p.type, p.permission_version, p.created_at, p.updated_at,
    json_build_object(
      'membershipId', (select m.id from identity_project_memberships m where m.project_id = p.id and m.identity_id = ${identityId}),
      'roles', (select json_agg(${roleJson("r")})
        from identity_project_memberships m
        join identity_project_membership_roles r on r.membership_id = m.id
        left join project_roles pr on pr.id = r.custom_role_id
        where m.project_id = p.id and m.identity_id = ${identityId}),
      'groupMembershipId', (select gpm.id from group_identity_members gim
        join group_project_memberships gpm on gpm.group_id = gim.group_id
        where gpm.project_id = p.id and gim.identity_id = ${identityId}
        order by gpm.created_at, gpm.id limit 1),
      'groupRoles', (select json_agg(${roleJson("gr")})
        from group_identity_members gim
        join group_project_memberships gpm on gpm.group_id = gim.group_id
        join group_project_membership_roles gr on gr.membership_id = gpm.id
        left join project_roles pr on pr.id = gr.custom_role_id
        where gpm.project_id = p.id and gim.identity_id = ${identityId}),
      'privileges', (select json_agg(json_build_object('isTemporary', a.is_temporary,
          'start', a.temporary_access_start_time, 'end', a.temporary_access_end_time, 'permissions', a.permissions))
        from identity_project_additional_privileges a
        where a.project_id = p.id and a.identity_id = ${identityId})
    ) as grants
  from projects p
  where ${where}`;

export const loadProjectAccessById = async (db: Database, projectId: string, identityId: string) =>
  (await accessQuery(sql`p.id = ${projectId}`, identityId).execute(db)).rows[0];

export const loadProjectAccessBySlug = async (db: Database, orgId: string, slug: string, identityId: string) =>
  (await accessQuery(sql`p.org_id = ${orgId} and p.slug = ${slug}`, identityId).execute(db)).rows[0];

/**
 * What identity templates are filled in from: the identity's name and metadata as stored now (not
 * as a cached token row saw them), and with `withAuth`, the claims its token's login established.
 */
export const loadTemplateContext = async (db: Database, actor: Actor, withAuth: boolean): Promise<TemplateContext> => {
  const [identity, metadata, claims] = await Promise.all([
    db.selectFrom("identities").select("name").where("id", "=", actor.identityId).executeTakeFirst(),
    db
      .selectFrom("identity_metadata")
      .select(["key", "value"])
      .where("identity_id", "=", actor.identityId)
      .orderBy("created_at")
      .execute(),
    withAuth
      ? db
          .selectFrom("identity_access_token_claims")
          .select(["auth_method", "claims"])
          .where("token_id", "=", actor.tokenId)
          .executeTakeFirst()
      : undefined,
  ]);
  return {
    identity: {
      id: actor.identityId,
      username: identity?.name ?? "",
      metadata: Object.fromEntries(metadata.map((m) => [m.key, m.value])),
      auth: claims ? { [claims.auth_method.replace(/-auth$/, "")]: { claims: claims.claims } } : {},
    },
  };
};

/** Every project an identity is in, directly or through a group. */
export const listProjectIdsOfIdentity = async (db: Database, identityId: string) =>
  (
    await db
      .selectFrom("identity_project_memberships")
      .select("project_id")
      .where("identity_id", "=", identityId)
      .union(
        db
          .selectFrom("group_project_memberships as gpm")
          .innerJoin("group_identity_members as gim", "gim.group_id", "gpm.group_id")
          .select("gpm.project_id")
          .where("gim.identity_id", "=", identityId),
      )
      .execute()
  ).map((row) => row.project_id);
