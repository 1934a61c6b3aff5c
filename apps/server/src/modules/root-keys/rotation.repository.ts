import { sql } from "kysely";
import type { Database } from "../../db/database";
import type { Tx } from "../../db/transaction";

export type RotationRow = {
  id: string;
  from_version: number;
  to_version: number;
  status: "running" | "completed" | "failed";
  total: number;
  rewrapped: number;
  cursor: Record<string, string>;
  error: string | null;
  org_id: string | null;
  started_at: Date;
  completed_at: Date | null;
};

const COLUMNS = [
  "id",
  "from_version",
  "to_version",
  "status",
  "total",
  "rewrapped",
  "cursor",
  "error",
  "org_id",
  "started_at",
  "completed_at",
] as const;

export const findRunningRotation = (db: Database | Tx) =>
  db
    .selectFrom("root_key_rotations")
    .select(COLUMNS)
    .where("status", "=", "running")
    .executeTakeFirst() as unknown as Promise<RotationRow | undefined>;

export const findRotation = (db: Database, id: string) =>
  db.selectFrom("root_key_rotations").select(COLUMNS).where("id", "=", id).executeTakeFirst() as unknown as Promise<
    RotationRow | undefined
  >;

export const findLatestRotation = (db: Database) =>
  db
    .selectFrom("root_key_rotations")
    .select(COLUMNS)
    .orderBy("started_at", "desc")
    .limit(1)
    .executeTakeFirst() as unknown as Promise<RotationRow | undefined>;

export const insertRotation = (
  trx: Tx,
  row: { from_version: number; to_version: number; total: number; org_id: string | null },
) =>
  trx
    .insertInto("root_key_rotations")
    .values({ ...row, status: "running" })
    .returning(COLUMNS)
    .executeTakeFirstOrThrow() as unknown as Promise<RotationRow>;

/**
 * Takes (or keeps) the running rotation for `owner` until `until`, when nobody else holds a live
 * claim on it; answers the row, or undefined when there is none or another instance holds it.
 */
export const claimRotation = (db: Database, owner: string, now: Date, until: Date) =>
  db
    .updateTable("root_key_rotations")
    .set({ lease_owner: owner, lease_until: until })
    .where("status", "=", "running")
    .where((eb) => eb.or([eb("lease_until", "is", null), eb("lease_until", "<", now), eb("lease_owner", "=", owner)]))
    .returning(COLUMNS)
    .executeTakeFirst() as unknown as Promise<RotationRow | undefined>;

/** Records a batch (cursor, count capped at the total, lease extended); false when the claim was lost. */
export const recordBatch = async (
  trx: Tx,
  id: string,
  owner: string,
  batch: { table: string; last: string | undefined; done: boolean; rewrapped: number; leaseUntil: Date },
) => {
  const moved: Record<string, string> = {};
  if (batch.last !== undefined) moved[batch.table] = batch.last;
  if (batch.done) moved[`${batch.table}:done`] = "1";
  const result = await trx
    .updateTable("root_key_rotations")
    .set({
      cursor: sql`cursor || ${JSON.stringify(moved)}::jsonb`,
      rewrapped: sql`least(total, rewrapped + ${batch.rewrapped}::integer)`,
      lease_until: batch.leaseUntil,
    })
    .where("id", "=", id)
    .where("status", "=", "running")
    .where("lease_owner", "=", owner)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
};

export const resetCursor = (trx: Tx, id: string) =>
  trx
    .updateTable("root_key_rotations")
    .set({ cursor: sql`'{}'::jsonb` })
    .where("id", "=", id)
    .execute();

export const completeRotation = (trx: Tx, id: string, owner: string, at: Date) =>
  trx
    .updateTable("root_key_rotations")
    .set({ status: "completed", completed_at: at, rewrapped: sql`total`, lease_owner: null, lease_until: null })
    .where("id", "=", id)
    .where("status", "=", "running")
    .where("lease_owner", "=", owner)
    .returning(COLUMNS)
    .executeTakeFirst() as unknown as Promise<RotationRow | undefined>;

export const failRotation = (db: Database, id: string, error: string, at: Date) =>
  db
    .updateTable("root_key_rotations")
    .set({ status: "failed", error, completed_at: at, lease_owner: null, lease_until: null })
    .where("id", "=", id)
    .where("status", "=", "running")
    .execute();
