import { sql } from "kysely";
import type { Database } from "../../db/database";
import type { Tx } from "../../db/transaction";
import type { SecretRotationsTable } from "../../db/tables/rotation";
import type { Insertable, Selectable, Updateable } from "kysely";

export type RotationRow = Selectable<SecretRotationsTable> & {
  connection_name: string;
  connection_app: string;
  env_id: string;
  env_slug: string;
  env_name: string;
};

const withPlace = (db: Database) =>
  db
    .selectFrom("secret_rotations as r")
    .innerJoin("app_connections as c", "c.id", "r.connection_id")
    .innerJoin("secret_folders as f", "f.id", "r.folder_id")
    .innerJoin("environments as e", "e.id", "f.env_id")
    .selectAll("r")
    .select([
      "c.name as connection_name",
      "c.app as connection_app",
      "e.id as env_id",
      "e.slug as env_slug",
      "e.name as env_name",
    ]);

export const findRotation = (db: Database, id: string) =>
  withPlace(db).where("r.id", "=", id).executeTakeFirst() as Promise<RotationRow | undefined>;

export const findRotationByName = (db: Database, folderId: string, name: string) =>
  withPlace(db).where("r.folder_id", "=", folderId).where("r.name", "=", name).executeTakeFirst() as Promise<
    RotationRow | undefined
  >;

export const listProjectRotations = (db: Database, projectId: string, type?: string) => {
  let query = withPlace(db).where("r.project_id", "=", projectId);
  if (type) query = query.where("r.type", "=", type);
  return query.orderBy("r.created_at").execute() as Promise<RotationRow[]>;
};

export const insertRotation = (trx: Tx, row: Insertable<SecretRotationsTable>) =>
  trx.insertInto("secret_rotations").values(row).execute();

export const updateRotation = (trx: Tx | Database, id: string, values: Updateable<SecretRotationsTable>) =>
  trx
    .updateTable("secret_rotations")
    .set({ ...values, updated_at: sql`now()` })
    .where("id", "=", id)
    .execute();

export const deleteRotationRow = (trx: Tx, id: string) =>
  trx.deleteFrom("secret_rotations").where("id", "=", id).execute();

/** The rotation's row, locked for the rest of the transaction. */
export const lockRotation = (trx: Tx, id: string) =>
  trx.selectFrom("secret_rotations").selectAll().where("id", "=", id).forUpdate().executeTakeFirst();

/** Serialises claims on rotations of one connection (60 bits of its id as an advisory lock key). */
export const lockConnectionClaims = async (trx: Tx, connectionId: string) => {
  const key = BigInt(`0x${connectionId.replace(/-/g, "").slice(0, 15)}`).toString();
  await sql`select pg_advisory_xact_lock(${key}::bigint)`.execute(trx);
};

/** Does another rotation of the connection hold a live claim? */
export const connectionBusy = async (trx: Tx, connectionId: string, exceptId: string, now: Date) =>
  (await trx
    .selectFrom("secret_rotations")
    .select("id")
    .where("connection_id", "=", connectionId)
    .where("id", "<>", exceptId)
    .where("claimed_until", ">", now)
    .executeTakeFirst()) !== undefined;

/**
 * Rotations to run now: auto rotation on and due, or with a rotation left half-way (an intent); not
 * claimed by a live instance. Locked with SKIP LOCKED so concurrent passes split them.
 */
export const findDueRotations = (trx: Tx, now: Date, limit: number) =>
  trx
    .selectFrom("secret_rotations")
    .select((eb) => [
      "id",
      "connection_id",
      eb
        .selectFrom("app_connections")
        .select("org_id")
        .whereRef("app_connections.id", "=", "secret_rotations.connection_id")
        .as("org_id"),
    ])
    .where((eb) =>
      eb.or([
        eb.and([eb("is_auto_rotation_enabled", "=", true), eb("next_rotation_at", "<=", now)]),
        eb("encrypted_intent", "is not", null),
      ]),
    )
    .where((eb) => eb.or([eb("claimed_until", "is", null), eb("claimed_until", "<", now)]))
    .orderBy("next_rotation_at")
    .limit(limit)
    .forUpdate()
    .skipLocked()
    .execute();
