import { CompiledQuery, sql, type RawBuilder } from "kysely";
import type { Actor } from "../../context";
import { batchedLookup } from "../../db/batched-lookup";
import { compiledOnce } from "../../db/compiled-once";
import { keepGenericPlan, type Database } from "../../db/database";
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

const roleJson = (alias: string) => `json_build_object('role', ${alias}.role, 'isTemporary', ${alias}.is_temporary,
    'start', ${alias}.temporary_access_start_time, 'end', ${alias}.temporary_access_end_time, 'permissions', pr.permissions)`;

/** The tables that hold one kind of actor's grants; the same shape for identities and users. */
const GRANT_TABLES = {
  identity: {
    memberships: "identity_project_memberships",
    roles: "identity_project_membership_roles",
    groupMembers: "group_identity_members",
    privileges: "identity_project_additional_privileges",
    actorColumn: "identity_id",
  },
  user: {
    memberships: "project_user_memberships",
    roles: "project_user_membership_roles",
    groupMembers: "group_user_members",
    privileges: "user_project_additional_privileges",
    actorColumn: "user_id",
  },
} as const;

export type ActorType = keyof typeof GRANT_TABLES;

/**
 * Every grant of the holder `h.holder_id` in project `p` (direct roles, group roles, additional
 * privileges) as one JSON object. Table names come from the constant map above, never from input.
 */
const grantsJson = (actorType: ActorType) => {
  const { memberships, roles, groupMembers, privileges, actorColumn: column } = GRANT_TABLES[actorType];
  return `json_build_object(
      'membershipId', (select m.id from ${memberships} m where m.project_id = p.id and m.${column} = h.holder_id),
      'roles', (select json_agg(${roleJson("r")})
        from ${memberships} m
        join ${roles} r on r.membership_id = m.id
        left join project_roles pr on pr.id = r.custom_role_id
        where m.project_id = p.id and m.${column} = h.holder_id),
      'groupMembershipId', (select gpm.id from ${groupMembers} gim
        join group_project_memberships gpm on gpm.group_id = gim.group_id
        where gpm.project_id = p.id and gim.${column} = h.holder_id
        order by gpm.created_at, gpm.id limit 1),
      'groupRoles', (select json_agg(${roleJson("gr")})
        from ${groupMembers} gim
        join group_project_memberships gpm on gpm.group_id = gim.group_id
        join group_project_membership_roles gr on gr.membership_id = gpm.id
        left join project_roles pr on pr.id = gr.custom_role_id
        where gpm.project_id = p.id and gim.${column} = h.holder_id),
      'privileges', (select json_agg(json_build_object('isTemporary', a.is_temporary,
          'start', a.temporary_access_start_time, 'end', a.temporary_access_end_time, 'permissions', a.permissions))
        from ${privileges} a
        where a.project_id = p.id and a.${column} = h.holder_id)
    )`;
};

const PROJECT_SELECT = PROJECT_COLUMNS.map((column) => `p.${column}`).join(", ");

/**
 * The project with every grant of the actor in it, in one round trip. Only run when no cached
 * ability is current: its correlated subqueries cost far more to plan than the small lookups of the
 * hot path.
 */
const accessQuery = (where: RawBuilder<unknown>, actorType: ActorType, actorId: string) =>
  sql<AccessRow>`select ${sql.raw(PROJECT_SELECT)}, ${sql.raw(grantsJson(actorType))} as grants
  from projects p, (select ${actorId}::uuid as holder_id) h
  where ${where}`;

/**
 * Many (project, holder) pairs of one kind of holder in one statement of fixed text, its plan kept:
 * the same rows as `accessQuery`, each tagged with its position in the batch.
 */
const ACCESS_OF_PAIRS = Object.fromEntries(
  (Object.keys(GRANT_TABLES) as ActorType[]).map((actorType) => [
    actorType,
    keepGenericPlan(`select h.n, ${PROJECT_SELECT}, ${grantsJson(actorType)} as grants
  from unnest($1::uuid[], $2::uuid[]) with ordinality as h(project_id, holder_id, n)
  join projects p on p.id = h.project_id`),
  ]),
) as Record<ActorType, string>;

const batchedAccess = Object.fromEntries(
  (Object.keys(GRANT_TABLES) as ActorType[]).map((actorType) => [
    actorType,
    batchedLookup(
      async (db, pairs) => {
        const parts = pairs.map((pair) => pair.split(":"));
        const { rows } = await db.executeQuery<AccessRow & { n: string | number; pair: string }>(
          CompiledQuery.raw(ACCESS_OF_PAIRS[actorType], [parts.map((p) => p[0]), parts.map((p) => p[1])]),
        );
        // Each row names its pair by its position in the batch; tagged in place, not copied.
        for (const row of rows) row.pair = pairs[Number(row.n) - 1]!;
        return rows;
      },
      (row) => row.pair,
    ),
  ]),
) as Record<ActorType, ReturnType<typeof batchedLookup<AccessRow & { n: string | number; pair: string }>>>;

/** Who holds the grants: an identity, or a user. */
export type GrantHolder = { type: ActorType; id: string };

export const loadProjectAccessById = async (db: Database, projectId: string, holder: GrantHolder) =>
  (await accessQuery(sql`p.id = ${projectId}`, holder.type, holder.id).execute(db)).rows[0];

/**
 * `loadProjectAccessById` outside a transaction, shared with the other such loads of the same
 * event-loop turn: a server whose requests each bring an identity whose ability is not cached sends
 * one statement per turn, not one per request. Both ids must be UUIDs.
 */
export const loadProjectAccessByIdBatched = async (
  db: Database,
  projectId: string,
  holder: GrantHolder,
): Promise<AccessRow | undefined> => {
  const row = await batchedAccess[holder.type](db, `${projectId}:${holder.id}`);
  if (!row) return undefined;
  // The project row reaches callers as theirs: without the batch's bookkeeping.
  const { n: _n, pair: _pair, ...access } = row;
  return access;
};

export const loadProjectAccessBySlug = async (db: Database, orgId: string, slug: string, holder: GrantHolder) =>
  (await accessQuery(sql`p.org_id = ${orgId} and p.slug = ${slug}`, holder.type, holder.id).execute(db)).rows[0];

/**
 * What identity templates are filled in from: the identity's name and metadata as stored now (not
 * as a cached token row saw them), and with `withAuth`, the claims its token's login established.
 */
export const loadTemplateContext = async (db: Database, actor: Actor, withAuth: boolean): Promise<TemplateContext> => {
  // A person has no identity metadata or login claims: their templates see their id and e-mail.
  if (actor.type === "user") return { identity: { id: actor.id, username: actor.name, metadata: {}, auth: {} } };
  const [identity, metadata, claims] = await Promise.all([
    db.selectFrom("identities").select("name").where("id", "=", actor.id).executeTakeFirst(),
    db
      .selectFrom("identity_metadata")
      .select(["key", "value"])
      .where("identity_id", "=", actor.id)
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
      id: actor.id,
      username: identity?.name ?? "",
      metadata: Object.fromEntries(metadata.map((m) => [m.key, m.value])),
      auth: claims ? { [claims.auth_method.replace(/-auth$/, "")]: { claims: claims.claims } } : {},
    },
  };
};

/** Every project a user is in, directly or through a group. */
export const listProjectIdsOfUser = async (db: Database, userId: string) =>
  (
    await db
      .selectFrom("project_user_memberships")
      .select("project_id")
      .where("user_id", "=", userId)
      .union(
        db
          .selectFrom("group_project_memberships as gpm")
          .innerJoin("group_user_members as gum", "gum.group_id", "gpm.group_id")
          .select("gpm.project_id")
          .where("gum.user_id", "=", userId),
      )
      .execute()
  ).map((row) => row.project_id);

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

/** A person's e-mail: what templates call a person's user name. */
export const findUserEmail = async (db: Database, userId: string) =>
  (await db.selectFrom("users").select("email").where("id", "=", userId).executeTakeFirst())?.email;
