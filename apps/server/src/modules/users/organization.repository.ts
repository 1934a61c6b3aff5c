import type { Database } from "../../db/database";
import type { Tx } from "../../db/transaction";

/** Organizations as people see them: the ones they belong to, and the one a sign-in names. */

export const listOrganizationsOfUser = (db: Database, userId: string) =>
  db
    .selectFrom("organizations as o")
    .innerJoin("org_user_memberships as om", "om.org_id", "o.id")
    .select(["o.id", "o.name", "o.slug", "o.created_at", "o.updated_at"])
    .where("om.user_id", "=", userId)
    .where("om.status", "=", "accepted")
    .where("om.is_active", "=", true)
    .orderBy("o.created_at")
    .execute();

export const findOrganizationById = (db: Database | Tx, orgId: string) =>
  db
    .selectFrom("organizations")
    .select(["id", "name", "slug", "created_at", "updated_at"])
    .where("id", "=", orgId)
    .executeTakeFirst();

export const findOrganizationBySlug = (db: Database, slug: string) =>
  db
    .selectFrom("organizations")
    .select(["id", "name", "slug", "created_at", "updated_at"])
    .where("slug", "=", slug)
    .executeTakeFirst();
